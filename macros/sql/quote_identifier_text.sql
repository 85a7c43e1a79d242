{% macro quote_identifier_text(expression) %}
    concat('`', replace({{ expression }}, '`', '``'), '`')
{%- endmacro %}
