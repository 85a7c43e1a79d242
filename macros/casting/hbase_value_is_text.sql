{% macro hbase_value_is_text(base64_value) %}
    (encode(decode(try_to_binary({{ base64_value }}, 'base64'), 'UTF-8'), 'UTF-8')
        = try_to_binary({{ base64_value }}, 'base64')
        and not decode(try_to_binary({{ base64_value }}, 'base64'), 'UTF-8') rlike '[\\x00-\\x08\\x0B\\x0C\\x0E-\\x1F\\x7F]')
{%- endmacro %}
