{% macro connect_column_type(field_schema) %}
    {#- A MySQL-like type name for one field of a Kafka Connect schema
        (struct<type, name, parameters>):
        1. the source type Debezium propagates with `column.propagate.source.type`
           (`__debezium.source.column.type`, `.length`, `.scale`), e.g. `varchar(255)`;
        2. else the type the logical name implies: `decimal(p,s)`, `date`, `datetime`
           (Timestamp/MicroTimestamp/NanoTimestamp), `timestamp` (ZonedTimestamp), `time`, `year`,
           `bit(n)`, `enum('a','b')`, `set('a','b')`, `json`, `geometry`;
        3. else the Connect type by its Schema.Type name (`int8` .. `int64`, `float32`, `float64`,
           `boolean`, `string`, `bytes`): Connect types do not say whether a string was char,
           varchar or text. The JSON converter writes FLOAT32/FLOAT64 as `float`/`double`, which
           would read as declared MySQL types; a `double` may be a MySQL DECIMAL sent with
           `decimal.handling.mode=double`, so it must not outrank a declared `decimal(p,s)`.
        Null when there is no schema. `field_schema` is repeated: pass a column or lambda variable. -#}
    {%- set f = field_schema -%}
    {%- set p = f ~ ".parameters" -%}
    case
        when {{ f }} is null then null
        when {{ p }}['__debezium.source.column.type'] is not null then concat(
            lower({{ p }}['__debezium.source.column.type']),
            case
                when {{ p }}['__debezium.source.column.length'] is null then ''
                else concat(
                    '(', {{ p }}['__debezium.source.column.length'],
                    if({{ p }}['__debezium.source.column.scale'] is null, '',
                        concat(',', {{ p }}['__debezium.source.column.scale'])),
                    ')'
                )
            end
        )
        when {{ f }}.name = 'org.apache.kafka.connect.data.Decimal' then concat(
            'decimal(', coalesce({{ p }}['connect.decimal.precision'], '?'), ',', {{ p }}['scale'], ')'
        )
        when {{ f }}.name = 'io.debezium.data.VariableScaleDecimal' then 'decimal'
        when {{ f }}.name in ('io.debezium.time.Date', 'org.apache.kafka.connect.data.Date') then 'date'
        when {{ f }}.name in (
            'io.debezium.time.Timestamp', 'io.debezium.time.MicroTimestamp', 'io.debezium.time.NanoTimestamp',
            'org.apache.kafka.connect.data.Timestamp'
        ) then 'datetime'
        when {{ f }}.name = 'io.debezium.time.ZonedTimestamp' then 'timestamp'
        when {{ f }}.name in (
            'io.debezium.time.Time', 'io.debezium.time.MicroTime', 'io.debezium.time.NanoTime',
            'org.apache.kafka.connect.data.Time'
        ) then 'time'
        when {{ f }}.name = 'io.debezium.time.Year' then 'year'
        when {{ f }}.name = 'io.debezium.data.Bits' then concat('bit(', coalesce({{ p }}['length'], '?'), ')')
        when {{ f }}.name in ('io.debezium.data.Enum', 'io.debezium.data.EnumSet') then concat(
            if({{ f }}.name = 'io.debezium.data.Enum', 'enum(', 'set('),
            array_join(transform(split({{ p }}['allowed'], ','), ct_label -> concat("'", ct_label, "'")), ','),
            ')'
        )
        when {{ f }}.name = 'io.debezium.data.Json' then 'json'
        when {{ f }}.name like 'io.debezium.data.geometry.%' then 'geometry'
        when {{ f }}.type = 'float' then 'float32'
        when {{ f }}.type = 'double' then 'float64'
        else {{ f }}.type
    end
{%- endmacro %}
