{% macro connect_value_text(value, decoder, parameters, sent_as_number='false', number_text=none) %}
    {#- Canonical text (docs/canonical_values.md) of one value of a Kafka Connect JSON record.
        `value`: the value as `from_json` reads it into map<string,string> (JSON text of numbers,
        booleans and nested objects; strings unquoted). `decoder`: the tag `connect_decoder` gave
        the field (null: no schema, the value is kept as sent), or `hbase_cell` for Lindorm's base64
        HBase cells (`hbase_value_text`). `parameters`: the field's schema
        parameters (Decimal `scale`). `sent_as_number`: SQL boolean, true when the value was a JSON
        number (not a JSON string) in the record, and `number_text` its exact text: a Connect
        Decimal is decided by that JSON type, never by how its text looks (a JSON string holds
        base64 bytes, a JSON number the number; `1234` is both valid base64 and a number).
        Booleans are MySQL BIT(1)/TINYINT(1): `1`/`0`. Null when a value does not decode (bad base64, text in an integer
        field, ...), which the base models report as an undecodable value. Arguments are repeated:
        pass lambda variables or map lookups. -#}
    {%- set v = value -%}
    {%- set b64_hex = "hex(try_to_binary(" ~ v ~ ", 'base64'))" -%}
    case
        when {{ v }} is null then null
        when {{ decoder }} is null then {{ v }}
        when {{ decoder }} = 'text' then {{ v }}
        when {{ decoder }} = 'integer' then if({{ v }} rlike '^-?[0-9]+$', {{ v }}, null)
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
        when {{ decoder }} = 'epoch_day' then cast(date_add(date'1970-01-01', try_cast({{ v }} as int)) as string)
        when {{ decoder }} = 'epoch_milli' then {{ epoch_datetime_text(v, 1000, 3) }}
        when {{ decoder }} = 'epoch_micro' then {{ epoch_datetime_text(v, 1000000, 6) }}
        when {{ decoder }} = 'epoch_nano' then {{ epoch_datetime_text(v, 1000000000, 9) }}
        when {{ decoder }} = 'zoned_timestamp' then {{ epoch_datetime_text('unix_micros(try_cast(' ~ v ~ ' as timestamp))', 1000000, 6) }}
        when {{ decoder }} = 'time_milli' then {{ duration_time_text(v, 1000, 3) }}
        when {{ decoder }} = 'time_micro' then {{ duration_time_text(v, 1000000, 6) }}
        when {{ decoder }} = 'time_nano' then {{ duration_time_text(v, 1000000000, 9) }}
        else {{ v }}
    end
{%- endmacro %}
