{% macro little_endian_unsigned_text(hex_value) %}
    {#- Unsigned decimal text of bytes read little-endian (Debezium `io.debezium.data.Bits`: MySQL
        BIT(n), PostgreSQL bit(n) and bit varying, up to any length), given as hex digits: the byte
        order is reversed (lambda-free, so it nests cheaply); up to 8 bytes `conv` reads the hex as an unsigned 64-bit number, longer
        values go through `twos_complement_text` with a zero sign byte. '0' for no bytes; null for
        null. `hex_value` is repeated: pass a cheap expression. -#}
    {#- the bytes in reverse order without a lambda: the text reversed, then each byte's two digits
        swapped back -#}
    {%- set big_endian = "regexp_replace(reverse(" ~ hex_value ~ "), '(.)(.)', '$2$1')" -%}
    case
        when {{ hex_value }} is null then null
        when {{ hex_value }} = '' then '0'
        when length({{ hex_value }}) <= 16 then conv({{ big_endian }}, 16, 10)
        else {{ twos_complement_text("concat('00', " ~ big_endian ~ ")") }}
    end
{%- endmacro %}
