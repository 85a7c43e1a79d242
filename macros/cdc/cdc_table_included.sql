{% macro cdc_table_included(database_name, table_name) %}
    {#- Boolean expression: does `database.table` pass the project's table filter? Vars
        `cdc_include_tables` and `cdc_exclude_tables` are lists of Java regular expressions, each
        matched against the whole text `<database>.<table>` (anchored; case-sensitive unless the
        pattern starts with `(?i)`). A table is kept when the include list is empty or one include
        pattern matches, and no exclude pattern matches. A DDL with no table is matched as
        `<database>.`. With both lists empty this is `true` (no filter). -#}
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
