{% macro zoned_timestamp_text(value) %}
    case
        when {{ value }} in ('infinity', '-infinity') then {{ value }}
        when {{ value }} rlike '^[+-]?[0-9]{4,}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]+)?Z$'
            then concat(
                regexp_extract({{ value }}, '^([^T]+)T', 1), ' ',
                {{ _trim_time_fraction("regexp_extract(" ~ value ~ ", 'T([0-9:.]+)Z$', 1)") }}
            )
        when {{ value }} rlike 'T[0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]+)?)?[+-][0-9]{2}(:?[0-9]{2}){0,2}$'
            then {{ epoch_datetime_text('unix_micros(try_cast(' ~ value ~ ' as timestamp))', 1000000, 6) }}
    end
{%- endmacro %}
