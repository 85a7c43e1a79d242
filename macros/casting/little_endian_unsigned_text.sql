{% macro little_endian_unsigned_text(hex_value) %}
    {#- Unsigned decimal text of up to 8 bytes read little-endian (Debezium `io.debezium.data.Bits`,
        MySQL BIT(n)), given as hex digits: the byte order is reversed, then `conv` reads the hex
        as an unsigned 64-bit number. '0' for no bytes; null for null or more than 8 bytes.
        `hex_value` is repeated: pass a cheap expression. -#}
    case
        when {{ hex_value }} is null or length({{ hex_value }}) > 16 then null
        when {{ hex_value }} = '' then '0'
        else conv(array_join(reverse(transform(
            sequence(0, length({{ hex_value }}) div 2 - 1),
            le_i -> substr({{ hex_value }}, le_i * 2 + 1, 2)
        )), ''), 16, 10)
    end
{%- endmacro %}
