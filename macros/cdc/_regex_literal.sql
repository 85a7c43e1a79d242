{% macro _regex_literal(pattern) %}
    {#- Private: a Jinja string as a Spark SQL string literal that reads back exactly (backslashes
        and quotes escaped), for regular expressions taken from vars. -#}
    '{{ pattern | replace("\\", "\\\\") | replace("'", "\\'") }}'
{% endmacro %}
