{% macro _typed_column_expressions(columns, image) %}
    {%- set expressions = [] -%}
    {%- for column in columns -%}
        {%- do expressions.append(
            cast_canonical_text(image ~ "[" ~ sql_string_literal(column['column_name']) ~ "]", column['spark_type'])
            ~ " as " ~ _typed_alias(column['column_name'])) -%}
    {%- endfor -%}
    {{- return(expressions) -}}
{% endmacro %}
