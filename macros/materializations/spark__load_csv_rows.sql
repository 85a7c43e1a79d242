{% macro spark__load_csv_rows(model, agate_table) %}
    {#- dbt-spark's seed loader, with the values written as escaped SQL literals instead of bindings.
        In session mode dbt-spark pastes bindings into the SQL unescaped: a quote in a seed broke
        the insert and an empty cell became the text 'None'. Here an empty cell is null and quotes
        and backslashes are escaped, so a seed holds any text. A seed table spark__reset_csv_table
        kept (already loaded from this CSV: kept_seeds) gets no rows; a loaded one records what it
        was loaded from (record_seed_load). -#}
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
