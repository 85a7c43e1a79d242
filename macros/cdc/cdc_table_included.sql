{% macro cdc_table_included(database_name, table_name) %}
    {%- set include = var('cdc_include_tables', []) -%}
    {%- set exclude = var('cdc_exclude_tables', []) -%}
    {%- set include = [include] if include is string else (include or []) -%}
    {%- set exclude = [exclude] if exclude is string else (exclude or []) -%}
    {%- for pattern in include + exclude -%}
        {%- if pattern is not string or not pattern -%}
            {{ exceptions.raise_compiler_error(
                "cdc_include_tables / cdc_exclude_tables must be lists of non-empty regex strings, got "
                ~ pattern) }}
        {%- endif -%}
    {%- endfor -%}
    {%- if not include and not exclude -%}
        true
    {%- else -%}
        {%- set subject = "concat(coalesce(" ~ database_name ~ ", ''), '.', coalesce(" ~ table_name ~ ", ''))" -%}
        (
        {%- if include %}
            ({% for pattern in include %}{{ subject }} rlike {{ sql_string_literal('^(?:' ~ pattern ~ ')$') }}{{ ' or ' if not loop.last }}{% endfor %})
        {%- else %}
            true
        {%- endif %}
        {%- for pattern in exclude %}
            and not {{ subject }} rlike {{ sql_string_literal('^(?:' ~ pattern ~ ')$') }}
        {%- endfor %}
        )
    {%- endif -%}
{% endmacro %}
