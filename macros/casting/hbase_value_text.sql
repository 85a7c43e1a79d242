{% macro hbase_value_text(base64_value) %}
    if(
        {{ hbase_value_is_text(base64_value) }},
        decode(try_to_binary({{ base64_value }}, 'base64'), 'UTF-8'),
        lower(hex(try_to_binary({{ base64_value }}, 'base64')))
    )
{%- endmacro %}
