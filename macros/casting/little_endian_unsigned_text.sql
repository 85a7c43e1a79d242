{% macro little_endian_unsigned_text(hex_value) %}
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
