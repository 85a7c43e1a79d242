{% macro connect_value_text(value, decoder, parameters, sent_as_number='false', number_text=none, items=none) %}
    {%- set v = value -%}
    {%- set b64_hex = "hex(try_to_binary(" ~ v ~ ", 'base64'))" -%}
    case
        when {{ v }} is null then null
        when {{ decoder }} is null then {{ v }}
        when {{ decoder }} = 'text' then {{ v }}
        when {{ decoder }} = 'integer' then if({{ v }} rlike '^-?[0-9]+$', {{ v }}, null)
        {#- a JSON number, or the text Jackson writes for NaN and the infinities (a JSON string) #}
        when {{ decoder }} in ('float', 'double') and not (
            {{ v }} rlike '^-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?$' or {{ v }} in ('NaN', 'Infinity', '-Infinity')
        ) then null
        when {{ decoder }} = 'float' then cast(try_cast({{ v }} as float) as string)
        when {{ decoder }} = 'double' then cast(try_cast({{ v }} as double) as string)
        when {{ decoder }} = 'boolean' then case {{ v }} when 'true' then '1' when 'false' then '0' end
        when {{ decoder }} = 'json' then {{ mysql_json_text(v) }}
        when {{ decoder }} = 'hbase_cell' then {{ hbase_value_text(v) }}
        when {{ decoder }} = 'decimal' and {{ sent_as_number }}
            then {{ plain_decimal_text(number_text if number_text is not none else v, parameters ~ "['scale']") }}
        when {{ decoder }} = 'decimal' then
            {{ scaled_decimal_text(twos_complement_text(b64_hex), parameters ~ "['scale']") }}
        when {{ decoder }} = 'variable_scale_decimal' then {{ scaled_decimal_text(
            twos_complement_text("hex(try_to_binary(get_json_object(" ~ v ~ ", '$.value'), 'base64'))"),
            "get_json_object(" ~ v ~ ", '$.scale')") }}
        when {{ decoder }} = 'bytes' then lower({{ b64_hex }})
        {#- MySQL's internal geometry value: the SRID as 4 bytes little-endian, then the WKB #}
        when {{ decoder }} = 'geometry' then lower(concat(
            array_join(reverse(regexp_extract_all(
                lpad(hex(coalesce(cast(get_json_object({{ v }}, '$.srid') as bigint), 0)), 8, '0'), '..', 0
            )), ''),
            hex(try_to_binary(get_json_object({{ v }}, '$.wkb'), 'base64'))
        ))
        when {{ decoder }} = 'bits' then {{ little_endian_unsigned_text(b64_hex) }}
        when {{ decoder }} = 'epoch_day' then {{ epoch_day_text(v) }}
        when {{ decoder }} = 'epoch_milli' then {{ epoch_milli_text(v) }}
        when {{ decoder }} = 'epoch_micro' then {{ epoch_micro_text(v) }}
        when {{ decoder }} = 'epoch_nano' then {{ epoch_datetime_text(v, 1000000000, 9) }}
        when {{ decoder }} = 'zoned_timestamp' then {{ zoned_timestamp_text(v) }}
        when {{ decoder }} = 'time_milli' then {{ duration_time_text(v, 1000, 3) }}
        when {{ decoder }} = 'time_micro' then {{ duration_time_text(v, 1000000, 6) }}
        when {{ decoder }} = 'time_nano' then {{ duration_time_text(v, 1000000000, 9) }}
        when {{ decoder }} = 'zoned_time' then {{ zoned_time_text(v) }}
        {#- microseconds, a month counted as 365.25 / 12 days; Debezium casts a double to a long,
            so an interval beyond ±2^63 µs arrives as Long.MAX_VALUE / MIN_VALUE: not its value #}
        when {{ decoder }} = 'micro_duration' then if(
            {{ v }} rlike '^-?[0-9]+$' and {{ v }} not in ('9223372036854775807', '-9223372036854775808'), {{ v }}, null
        )
        when {{ decoder }} = 'iso_interval' then if(
            {{ v }} rlike '^P-?[0-9]+Y-?[0-9]+M-?[0-9]+DT-?[0-9]+H-?[0-9]+M-?[0-9]+(\\.[0-9]+)?S$', {{ v }}, null
        )
        {%- if items is not none %}
        when {{ decoder }} = 'array' then {{ connect_array_text(v, items) }}
        {%- endif %}
        else {{ v }}
    end
{%- endmacro %}
