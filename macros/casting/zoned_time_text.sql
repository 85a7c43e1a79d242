{% macro zoned_time_text(value) %}
    {#- Canonical text of a Debezium ZonedTime (PostgreSQL timetz): the time of day in UTC as
        `HH:mm:ss[.f]Z`, the fraction without trailing zeros. Debezium converts every value to UTC
        and writes it with `Z` (ISO_OFFSET_TIME); text with another offset, or none, is not what it
        sends: null. `value` is repeated: pass a column or lambda variable. -#}
    if(
        {{ value }} rlike '^[0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]+)?Z$',
        concat({{ _trim_time_fraction("substr(" ~ value ~ ", 1, length(" ~ value ~ ") - 1)") }}, 'Z'),
        null
    )
{%- endmacro %}
