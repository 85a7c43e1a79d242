{% macro connect_value_text(value, decoder, parameters, sent_as_number='false', number_text=none, items=none) %}
    {#- Canonical text (docs/canonical_values.md) of one value of a Kafka Connect JSON record.
        `value`: the value as `from_json` reads it into map<string,string> (JSON text of numbers,
        booleans, arrays and nested objects; strings unquoted). `decoder`: the tag `connect_decoder`
        gave the field (null: no schema, the value is kept as sent), or `hbase_cell` for Lindorm's
        base64 HBase cells (`hbase_value_text`). `parameters`: the field's schema parameters
        (Decimal `scale`). `sent_as_number`: SQL boolean, true when the value was a JSON number
        (not a JSON string) in the record, and `number_text` its exact text: a Connect Decimal is
        decided by that JSON type, never by how its text looks (a JSON string holds base64 bytes, a
        JSON number the number; `1234` is both valid base64 and a number). `items`: SQL expression
        of an array field's element schema (struct<type, name, parameters>; `connect_array_items`):
        the elements are decoded by it (`connect_array_text`); without it an array is kept as sent.
        Booleans are MySQL BIT(1)/TINYINT(1) and PostgreSQL boolean: `1`/`0`. Null when a value
        does not decode (bad base64, text in an integer field, a date out of every source's range,
        ...), which the base models report as an undecodable value. Arguments are repeated: pass
        lambda variables or map lookups. -#}
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
