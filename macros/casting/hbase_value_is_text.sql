{% macro hbase_value_is_text(base64_value) %}
    {#- True when the bytes of a base64 HBase cell are valid UTF-8 (they survive a decode/encode
        round trip) and hold no control characters other than tab, LF and CR; such cells are
        rendered as text by `hbase_value_text`, others as hex. -#}
    (encode(decode(try_to_binary({{ base64_value }}, 'base64'), 'UTF-8'), 'UTF-8')
        = try_to_binary({{ base64_value }}, 'base64')
        and not decode(try_to_binary({{ base64_value }}, 'base64'), 'UTF-8') rlike '[\\x00-\\x08\\x0B\\x0C\\x0E-\\x1F\\x7F]')
{%- endmacro %}
