{% macro connect_decoder(field_schema) %}
    {%- set f = field_schema -%}
    case
        when {{ f }} is null then null
        when {{ f }}.name = 'org.apache.kafka.connect.data.Decimal' then 'decimal'
        when {{ f }}.name = 'io.debezium.data.VariableScaleDecimal' then 'variable_scale_decimal'
        when {{ f }}.name in ('io.debezium.time.Date', 'org.apache.kafka.connect.data.Date') then 'epoch_day'
        when {{ f }}.name in ('io.debezium.time.Timestamp', 'org.apache.kafka.connect.data.Timestamp') then 'epoch_milli'
        when {{ f }}.name = 'io.debezium.time.MicroTimestamp' then 'epoch_micro'
        when {{ f }}.name = 'io.debezium.time.NanoTimestamp' then 'epoch_nano'
        when {{ f }}.name = 'io.debezium.time.ZonedTimestamp' then 'zoned_timestamp'
        when {{ f }}.name in ('io.debezium.time.Time', 'org.apache.kafka.connect.data.Time') then 'time_milli'
        when {{ f }}.name = 'io.debezium.time.MicroTime' then 'time_micro'
        when {{ f }}.name = 'io.debezium.time.NanoTime' then 'time_nano'
        when {{ f }}.name = 'io.debezium.time.ZonedTime' then 'zoned_time'
        when {{ f }}.name = 'io.debezium.time.MicroDuration' then 'micro_duration'
        when {{ f }}.name = 'io.debezium.time.Interval' then 'iso_interval'
        when {{ f }}.name = 'io.debezium.data.Bits' then 'bits'
        when {{ f }}.name = 'io.debezium.data.Json' then 'json'
        when {{ f }}.name like 'io.debezium.data.geometry.%' then 'geometry'
        when {{ f }}.name is not null and {{ f }}.type != 'bytes' then 'text'
        when {{ f }}.type = 'bytes' then 'bytes'
        when {{ f }}.type = 'boolean' then 'boolean'
        when {{ f }}.type = 'float' then 'float'
        when {{ f }}.type = 'double' then 'double'
        when {{ f }}.type in ('int8', 'int16', 'int32', 'int64') then 'integer'
        when {{ f }}.type = 'array' then 'array'
        {#- a Connect map (PostgreSQL hstore with hstore.handling.mode=map) is a JSON object #}
        when {{ f }}.type = 'map' then 'json'
        else 'text'
    end
{%- endmacro %}
