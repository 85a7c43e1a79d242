{% macro _trim_time_fraction(text) %}
    {#- Private to the casting macros (canonical_mysql_value, zoned_time_text,
        zoned_timestamp_text): drop trailing zeros of a time fraction, and the dot when
        nothing is left ('13:05:00.120000' -> '13:05:00.12', '13:05:00.000' -> '13:05:00'). -#}
    regexp_replace({{ text }}, '(\\.[0-9]*[1-9])0+$|\\.0*$', '$1')
{% endmacro %}
