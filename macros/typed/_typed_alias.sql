{% macro _typed_alias(column_name) %}
    {#- The typed model's name for a source column: the name itself, `_src` appended when it
        clashes with a metadata column, always back-quoted. -#}
    {%- set name = column_name ~ ('_src' if column_name | lower in _typed_metadata_columns() else '') -%}
    {{- return(quote_identifier(name)) -}}
{% endmacro %}
