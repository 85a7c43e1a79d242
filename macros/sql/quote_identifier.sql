{% macro quote_identifier(name) %}
    {%- if name is none or (name | string) == '' -%}
        {{ exceptions.raise_compiler_error("quote_identifier: the name must be a non-empty string") }}
    {%- endif -%}
    {{- return('`' ~ (name | string | replace('`', '``')) ~ '`') -}}
{% endmacro %}
