{% macro quote_identifier(name) %}
    {#- A Spark SQL identifier for any name known at compile time (a column, table or database
        name that came from data): back-quoted, embedded backticks doubled. -#}
    {%- if name is none or (name | string) == '' -%}
        {{ exceptions.raise_compiler_error("quote_identifier: the name must be a non-empty string") }}
    {%- endif -%}
    {{- return('`' ~ (name | string | replace('`', '``')) ~ '`') -}}
{% endmacro %}
