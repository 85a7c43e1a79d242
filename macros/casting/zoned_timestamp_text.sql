{% macro zoned_timestamp_text(value) %}
    {#- Canonical text of a Debezium ZonedTimestamp (ISO-8601 with an offset): the instant in UTC,
        `yyyy-MM-dd HH:mm:ss[.f]` (fraction without trailing zeros). A UTC value (`Z`, what
        Debezium writes) is rewritten as text, so no range applies: PostgreSQL's years beyond
        Spark's timestamps (`+294276-12-31T23:59:59.999999Z`) and before 1 AD (`-4712-01-01T...`,
        ISO years: 0 is 1 BC) keep their digits, written as Spark writes such dates. PostgreSQL's
        `infinity` / `-infinity` are kept. Other offsets go through a Spark timestamp (µs). Null
        when the text is none of these. `value` is repeated: pass a column or lambda variable. -#}
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
