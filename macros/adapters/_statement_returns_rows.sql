{% macro _statement_returns_rows(sql) %}
    {%- set re = modules.re -%}
    {%- set text = re.sub('^(\\s+|--[^\\n]*|/\\*.*?\\*/|\\()+', '', sql | string, flags=re.S) -%}
    {%- set first = re.match('[a-zA-Z]+', text) -%}
    {%- set row_keywords = ['select', 'with', 'from', 'values', 'table', 'show', 'describe', 'desc', 'explain', 'list'] -%}
    {{ return(first is not none and first.group(0) | lower in row_keywords) }}
{% endmacro %}
