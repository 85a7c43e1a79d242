{% macro _typed_alias(column_name) %}
    {%- set name = column_name ~ ('_src' if column_name | lower in _typed_metadata_columns() else '') -%}
    {{- return(quote_identifier(name)) -}}
{% endmacro %}
