{% macro hbase_value_text(base64_value) %}
    {#- Lindorm sends HBase cells as base64 of the raw bytes. The canonical text is the UTF-8 text
        of the bytes when `hbase_value_is_text`, otherwise the lowercase hex of the bytes (the
        canonical binary encoding). Null when the value is not base64. `base64_value` is
        repeated: pass a lambda variable or column. -#}
    if(
        {{ hbase_value_is_text(base64_value) }},
        decode(try_to_binary({{ base64_value }}, 'base64'), 'UTF-8'),
        lower(hex(try_to_binary({{ base64_value }}, 'base64')))
    )
{%- endmacro %}
