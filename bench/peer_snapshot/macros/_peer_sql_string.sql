{% macro _peer_sql_string(text) %}
    {#- A Spark SQL string literal holding `text` (backslashes and quotes escaped). -#}
    {{ return("'" ~ (text | string).replace('\\', '\\\\').replace("'", "\\'") ~ "'") }}
{% endmacro %}
