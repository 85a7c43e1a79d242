{% macro configured_primary_keys(database_name, table_name) %}
    {%- set keys = var('cdc_primary_keys', {}) -%}
    {%- if keys is not mapping -%}
        {{ exceptions.raise_compiler_error("var cdc_primary_keys must map '<database>.<table>' to a list of columns") }}
    {%- endif -%}
    {%- if keys | length == 0 -%}
        cast(null as array<string>)
    {%- else -%}
        map(
        {%- for table, columns in keys.items() %}
            {%- if columns is string or columns is not iterable or columns | length == 0 -%}
                {{ exceptions.raise_compiler_error("cdc_primary_keys['" ~ table ~ "'] must be a non-empty list of columns") }}
            {%- endif %}
            {{ sql_string_literal(table) }}, array({% for column in columns %}{{ sql_string_literal(column) }}{{ ", " if not loop.last }}{% endfor %}){{ "," if not loop.last }}
        {%- endfor %}
        )[concat({{ database_name }}, '.', {{ table_name }})]
    {%- endif -%}
{% endmacro %}
