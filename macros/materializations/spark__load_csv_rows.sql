{% macro spark__load_csv_rows(model, agate_table) %}
    {%- if model.unique_id in kept_seeds() -%}
        {{ return('') }}
    {%- endif -%}
    {%- set batch_size = get_batch_size() -%}
    {%- set column_override = model['config'].get('column_types', {}) -%}
    {%- set types = [] -%}
    {%- for col_name in agate_table.column_names -%}
        {%- do types.append(column_override.get(col_name, adapter.convert_type(agate_table, loop.index0))) -%}
    {%- endfor -%}
    {%- set statements = [] -%}
    {%- for chunk in agate_table.rows | batch(batch_size) -%}
        {%- set sql -%}
            insert into {{ this.render() }} values
            {% for row in chunk -%}
                (
                {%- for value in row -%}
                    {%- if value is none -%}
                        cast(null as {{ types[loop.index0] }})
                    {%- else -%}
                        cast('{{ value | string | replace("\\", "\\\\") | replace("'", "\\'") }}' as {{ types[loop.index0] }})
                    {%- endif -%}
                    {{- ", " if not loop.last -}}
                {%- endfor -%}
                ){{ "," if not loop.last }}
            {% endfor %}
        {%- endset -%}
        {%- do adapter.add_query(sql, abridge_sql_log=True) -%}
        {%- if loop.index0 == 0 -%}
            {%- do statements.append(sql) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- do record_seed_load(this, model) -%}
    {{ return(statements[0]) }}
{% endmacro %}
