{% macro epoch_day_text(value) %}
    {#- Canonical `yyyy-MM-dd` of a count of days since 1970-01-01 (Debezium Date, Kafka Connect
        Date), years beyond 9999 and before 1 AD as Spark writes them (`+5874897-12-31`,
        `-4712-01-01`). PostgreSQL's `infinity` / `-infinity` are the days Debezium writes for them:
        -2147472692 / -2147472691 from its streaming (pgoutput), -622191234 / -625821272 from its
        snapshot (JDBC, in a UTC JVM). Null for anything else outside PostgreSQL's range
        (4714-11-24 BC .. 5874897-12-31): no source has such a date. `value` is repeated: pass a
        column or lambda variable. -#}
    case
        when {{ value }} in ('-2147472692', '-622191234') then 'infinity'
        when {{ value }} in ('-2147472691', '-625821272') then '-infinity'
        when try_cast({{ value }} as int) between -2440588 and 2145042905
            then cast(date_add(date'1970-01-01', try_cast({{ value }} as int)) as string)
    end
{%- endmacro %}


{% macro epoch_milli_text(value) %}
    {#- Canonical `yyyy-MM-dd HH:mm:ss[.f]` of a count of milliseconds since the epoch (Debezium
        Timestamp, Kafka Connect Timestamp; `epoch_datetime_text`). PostgreSQL's `infinity` /
        `-infinity` are 9223372036825200 / -9223372036832400 (PGStatement.DATE_POSITIVE_INFINITY
        and DATE_NEGATIVE_INFINITY, in microseconds, as milliseconds). Null outside PostgreSQL's
        range (4714-11-24 BC .. 294276-12-31 23:59:59.999). `value` is repeated. -#}
    case
        when {{ value }} = '9223372036825200' then 'infinity'
        when {{ value }} = '-9223372036832400' then '-infinity'
        when try_cast({{ value }} as bigint) between -210866803200000 and 9224318015999999
            then {{ epoch_datetime_text(value, 1000, 3) }}
    end
{%- endmacro %}


{% macro epoch_micro_text(value) %}
    {#- Canonical `yyyy-MM-dd HH:mm:ss[.f]` of a count of microseconds since the epoch (Debezium
        MicroTimestamp). PostgreSQL's `infinity` / `-infinity` are 9223372036825200000 /
        -9223372036832400000. A count before 4714-11-24 BC is no timestamp but Debezium's overflow
        of one after 294247-01-10 (which µs since 1970 cannot hold; 294276-12-31 23:59:59.999999
        arrives as -9223372036853775810): null. `value` is repeated. -#}
    case
        when {{ value }} = '9223372036825200000' then 'infinity'
        when {{ value }} = '-9223372036832400000' then '-infinity'
        when try_cast({{ value }} as bigint) >= -210866803200000000 then {{ epoch_datetime_text(value, 1000000, 6) }}
    end
{%- endmacro %}
