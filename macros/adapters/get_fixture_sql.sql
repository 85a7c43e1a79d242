{% macro get_fixture_sql(rows, column_name_to_data_types) %}
-- Fixture for {{ model.name }}
    {%- set types = {} -%}
    {%- do types.update(column_name_to_data_types or {}) -%}
    {%- if not types -%}
        {%- for column in adapter.get_columns_in_relation(this) -%}
            {%- do types.update({column.name | lower: column.data_type}) -%}
        {%- endfor -%}
    {%- endif -%}
    {%- if not types -%}
        {{ exceptions.raise_compiler_error("Not able to get columns for unit test '" ~ model.name
                                           ~ "' from relation " ~ this ~ " because the relation doesn't exist") }}
    {%- endif -%}
    {%- do validate_fixture_rows(rows, none) -%}
    {%- set names = types.keys() | list -%}
    {%- if rows | length == 0 %}
select
    {%- for name in names %} {{ safe_cast('null', types[name]) }} as {{ adapter.quote(name) }}{{ ',' if not loop.last }}
    {%- endfor %}
limit 0
    {%- else %}
select * from values
        {%- for row in rows %}
            {%- set given = format_row(row, types) %}
    ({% for name in names %}{{ given[name] if name in given else safe_cast('null', types[name]) }}{{ ', ' if not loop.last }}{% endfor %}){{ ',' if not loop.last }}
        {%- endfor %}
    as fixture({% for name in names %}{{ adapter.quote(name) }}{{ ', ' if not loop.last }}{% endfor %})
    {%- endif %}
{% endmacro %}
