{% macro epoch_day_text(value) %}
    case
        when {{ value }} in ('-2147472692', '-622191234') then 'infinity'
        when {{ value }} in ('-2147472691', '-625821272') then '-infinity'
        when try_cast({{ value }} as int) between -2440588 and 2145042905
            then cast(date_add(date'1970-01-01', try_cast({{ value }} as int)) as string)
    end
{%- endmacro %}

{% macro epoch_milli_text(value) %}
    case
        when {{ value }} = '9223372036825200' then 'infinity'
        when {{ value }} = '-9223372036832400' then '-infinity'
        when try_cast({{ value }} as bigint) between -210866803200000 and 9224318015999999
            then {{ epoch_datetime_text(value, 1000, 3) }}
    end
{%- endmacro %}

{% macro epoch_micro_text(value) %}
    case
        when {{ value }} = '9223372036825200000' then 'infinity'
        when {{ value }} = '-9223372036832400000' then '-infinity'
        when try_cast({{ value }} as bigint) >= -210866803200000000 then {{ epoch_datetime_text(value, 1000000, 6) }}
    end
{%- endmacro %}
