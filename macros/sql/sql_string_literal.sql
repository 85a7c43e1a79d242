{% macro sql_string_literal(text) %}
    {{- return("'" ~ (text | string | replace("\\", "\\\\") | replace("'", "\\'")) ~ "'") -}}
{% endmacro %}
