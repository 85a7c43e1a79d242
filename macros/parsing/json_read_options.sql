{% macro json_read_options(extra={}) %}
    map({%- for name, value in extra.items() %}'{{ name }}', '{{ value }}', {% endfor -%}'maxStringLen', '2147483647')
{%- endmacro %}
