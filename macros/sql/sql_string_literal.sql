{% macro sql_string_literal(text) %}
    {#- A Spark SQL string literal that reads back exactly as `text` (backslashes and single quotes
        escaped), for names and patterns known at compile time (from data, seeds or vars). -#}
    {{- return("'" ~ (text | string | replace("\\", "\\\\") | replace("'", "\\'")) ~ "'") -}}
{% endmacro %}
