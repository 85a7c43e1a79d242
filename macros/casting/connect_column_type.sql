{% macro connect_column_type(field_schema) %}
    {%- set f = field_schema -%}
    {%- set p = f ~ ".parameters" -%}
    {%- set source_type = "lower(trim(" ~ p ~ "['__debezium.source.column.type']))" -%}
    {%- set source_base = "regexp_extract(" ~ source_type ~ ", '^([a-z0-9_]+)', 1)" -%}
    case
        when {{ f }} is null then null
        when {{ p }}['__debezium.source.column.type'] is not null then case
            when {{ source_base }} in ('int2', 'int4', 'int8', 'float4', 'float8', 'timestamptz', 'timetz')
                or ({{ source_base }} = 'bool' and {{ f }}.type = 'boolean')
                then concat(
                    case {{ source_base }}
                        when 'int2' then 'smallint'
                        when 'int4' then 'integer'
                        when 'int8' then 'bigint'
                        when 'float4' then 'real'
                        when 'float8' then 'double precision'
                        when 'timestamptz' then 'timestamp with time zone'
                        when 'timetz' then 'time with time zone'
                        else 'boolean'
                    end,
                    substr({{ source_type }}, length({{ source_base }}) + 1)
                )
            else concat(
                if({{ source_base }} = 'bpchar', concat('char', substr({{ source_type }}, 7)), {{ source_type }}),
                case
                    when {{ p }}['__debezium.source.column.length'] is null then ''
                    {#- PostgreSQL 15's numeric(p,-s) holds integers of p + s digits #}
                    when try_cast({{ p }}['__debezium.source.column.scale'] as int) < 0 then
                        '(' || cast(try_cast({{ p }}['__debezium.source.column.length'] as int)
                            - try_cast({{ p }}['__debezium.source.column.scale'] as int) as string) || ',0)'
                    else concat(
                        '(', {{ p }}['__debezium.source.column.length'],
                        if({{ p }}['__debezium.source.column.scale'] is null, '',
                            concat(',', {{ p }}['__debezium.source.column.scale'])),
                        ')'
                    )
                end
            )
        end
        when {{ f }}.name = 'org.apache.kafka.connect.data.Decimal' and try_cast({{ p }}['scale'] as int) < 0 then concat(
            'decimal(',
            coalesce(cast(try_cast({{ p }}['connect.decimal.precision'] as int) - try_cast({{ p }}['scale'] as int) as string), '?'),
            ',0)'
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
        when {{ f }}.name = 'io.debezium.time.ZonedTime' then 'timetz'
        when {{ f }}.name in ('io.debezium.time.MicroDuration', 'io.debezium.time.Interval') then 'interval'
        when {{ f }}.name = 'io.debezium.time.Year' then 'year'
        when {{ f }}.name = 'io.debezium.data.Bits' then concat(
            if(try_cast({{ p }}['length'] as int) > 64, 'varbit(', 'bit('), coalesce({{ p }}['length'], '?'), ')'
        )
        when {{ f }}.name in ('io.debezium.data.Enum', 'io.debezium.data.EnumSet') then concat(
            if({{ f }}.name = 'io.debezium.data.Enum', 'enum(', 'set('),
            array_join(transform(split({{ p }}['allowed'], ','), ct_label -> concat("'", ct_label, "'")), ','),
            ')'
        )
        when {{ f }}.name = 'io.debezium.data.Json' then 'json'
        when {{ f }}.name = 'io.debezium.data.Uuid' then 'uuid'
        when {{ f }}.name = 'io.debezium.data.Xml' then 'xml'
        when {{ f }}.name = 'io.debezium.data.Ltree' then 'ltree'
        when {{ f }}.name like 'io.debezium.data.geometry.%' then 'geometry'
        when {{ f }}.type = 'float' then 'float32'
        when {{ f }}.type = 'double' then 'float64'
        else {{ f }}.type
    end
{%- endmacro %}
