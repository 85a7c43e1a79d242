{% macro _statement_returns_rows(sql) %}
    {#- True when a Spark SQL statement returns rows: its first keyword, after leading comments,
        blanks and parentheses, is a query or an inspection command. A CTE (`with`) counts as a
        query, so `with ... insert` would still be fetched; run such statements with `statement`. -#}
    {%- set re = modules.re -%}
    {%- set text = re.sub('^(\\s+|--[^\\n]*|/\\*.*?\\*/|\\()+', '', sql | string, flags=re.S) -%}
    {%- set first = re.match('[a-zA-Z]+', text) -%}
    {%- set row_keywords = ['select', 'with', 'from', 'values', 'table', 'show', 'describe', 'desc', 'explain', 'list'] -%}
    {{ return(first is not none and first.group(0) | lower in row_keywords) }}
{% endmacro %}
