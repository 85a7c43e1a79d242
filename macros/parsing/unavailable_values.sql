{% macro unavailable_value_forms() %}
    {%- set placeholder = var('cdc_unavailable_value_placeholder', '__debezium_unavailable_value') -%}
    {%- if placeholder.startswith('hex:') -%}
        {%- set bytes = "unhex(" ~ sql_string_literal(placeholder[4:]) ~ ")" -%}
    {%- else -%}
        {%- set bytes = "encode(" ~ sql_string_literal(placeholder) ~ ", 'UTF-8')" -%}
    {%- endif -%}
    {%- set text = "decode(" ~ bytes ~ ", 'UTF-8')" -%}
    {%- set md5_hex = "md5(" ~ bytes ~ ")" -%}
    {%- set uuid = "concat_ws('-', substr(" ~ md5_hex ~ ", 1, 8), substr(" ~ md5_hex ~ ", 9, 4), "
        ~ "concat('3', substr(" ~ md5_hex ~ ", 14, 3)), "
        ~ "concat(lower(hex((cast(conv(substr(" ~ md5_hex ~ ", 17, 1), 16, 10) as int) & 3) | 8)), "
        ~ "substr(" ~ md5_hex ~ ", 18, 3)), substr(" ~ md5_hex ~ ", 21, 12))" -%}
    {%- set signed_bytes = "transform(sequence(1, length(" ~ bytes ~ ")), uv_i -> "
        ~ "cast(conv(hex(substr(" ~ bytes ~ ", uv_i, 1)), 16, 10) as int) "
        ~ "- if(cast(conv(hex(substr(" ~ bytes ~ ", uv_i, 1)), 16, 10) as int) > 127, 256, 0))" -%}
    array(
        {{ text }},
        base64({{ bytes }}),
        to_json(array({{ text }})),
        to_json(array(base64({{ bytes }}))),
        to_json({{ signed_bytes }}),
        to_json(map({{ text }}, {{ text }})),
        to_json(array({{ uuid }}))
    )
{%- endmacro %}

{% macro unavailable_columns(sent_image, forms) %}
    array_sort(map_keys(map_filter({{ sent_image }}, (uv_k, uv_v) -> array_contains({{ forms }}, uv_v))))
{%- endmacro %}

{% macro without_columns(image, columns) %}
    transform_values({{ image }}, (wc_k, wc_v) -> if(array_contains({{ columns }}, wc_k), null, wc_v))
{%- endmacro %}

{% macro key_only_image(image, key_columns, field_schemas='field_schemas') %}
    ({{ image }} is not null and size({{ key_columns }}) > 0 and forall(
        map_entries({{ image }}),
        ko_e -> array_contains({{ key_columns }}, ko_e.key)
        or ko_e.value is null
        or if(
            {{ field_schemas }}[ko_e.key] is null,
            {{ _debezium_fill_value_by_look('ko_e.value') }},
            {{ _debezium_fill_value('ko_e.value', field_schemas ~ '[ko_e.key]') }}
        )
    ))
{%- endmacro %}

{% macro _debezium_fill_forms() %}
    {{ return({
        'zoned_timestamp': '1970-01-01T00:00:00Z',
        'zoned_time': '00:00:00Z',
        'iso_date': '1970-01-01Z',
        'interval': 'P0Y0M0DT0H0M0S',
        'variable_scale_decimal': '{"scale":0,"value":"AA=="}',
        'point': '{"x":0.0,"y":0.0,"wkb":"AQEAAAAAAAAAAAAAAAAAAAAAAAAA","srid":null}',
        'geometry': '{"wkb":"AQcAAAAAAAAA","srid":null}',
        'decimal': 'AA==',
    }) }}
{% endmacro %}

{% macro _debezium_fill_value(value, field) %}
    {%- set f = _debezium_fill_forms() -%}
    {%- set zero = "'^0(\\\\.0+)?$'" -%}
    (coalesce({{ value }} = {{ field }}.default_value, false) or (
        not coalesce({{ field }}.optional, true) and coalesce(case
            when {{ field }}.type = 'boolean' then {{ value }} = 'false'
            when {{ field }}.type in ('int8', 'int16', 'int32', 'int64') then {{ value }} = '0'
            when {{ field }}.type in ('float', 'double') then {{ value }} rlike {{ zero }}
            when {{ field }}.type = 'array' then {{ value }} = '[]'
            when {{ field }}.type = 'map' then {{ value }} = '{}'
            -- a Decimal: base64 of its unscaled zero, or (decimal.format=NUMERIC) the number
            when {{ field }}.name = 'org.apache.kafka.connect.data.Decimal'
                then {{ value }} = {{ sql_string_literal(f.decimal) }} or {{ value }} rlike {{ zero }}
            -- bytea, Bits, an unknown type: zero bytes
            when {{ field }}.type = 'bytes' then {{ value }} = ''
            when {{ field }}.name in ('io.debezium.time.ZonedTimestamp', 'io.debezium.time.IsoTimestamp')
                then {{ value }} = {{ sql_string_literal(f.zoned_timestamp) }}
            when {{ field }}.name in ('io.debezium.time.ZonedTime', 'io.debezium.time.IsoTime')
                then {{ value }} = {{ sql_string_literal(f.zoned_time) }}
            when {{ field }}.name = 'io.debezium.time.IsoDate' then {{ value }} = {{ sql_string_literal(f.iso_date) }}
            when {{ field }}.name = 'io.debezium.time.Interval' then {{ value }} = {{ sql_string_literal(f.interval) }}
            -- json and jsonb: the empty string; hstore (hstore.handling.mode=json): an empty object
            when {{ field }}.name = 'io.debezium.data.Json' then {{ value }} in ('', '{}')
            -- decimal.handling.mode=string writes numeric and money as unnamed strings: their zero
            when {{ field }}.type = 'string' and {{ field }}.name is null
                then {{ value }} = '' or {{ value }} rlike {{ zero }}
            -- uuid, xml, an enum, ltree, tsvector, inet, ranges, ...: the empty string
            when {{ field }}.type = 'string' then {{ value }} = ''
            when {{ field }}.name = 'io.debezium.data.VariableScaleDecimal'
                then {{ value }} = {{ sql_string_literal(f.variable_scale_decimal) }}
            when {{ field }}.name = 'io.debezium.data.geometry.Point'
                then {{ value }} = {{ sql_string_literal(f.point) }}
            when {{ field }}.name in ('io.debezium.data.geometry.Geometry', 'io.debezium.data.geometry.Geography')
                then {{ value }} = {{ sql_string_literal(f.geometry) }}
        end, false)
    ))
{%- endmacro %}

{% macro _debezium_fill_value_by_look(value) %}
    {%- set f = _debezium_fill_forms() -%}
    ({{ value }} in (
        '', 'false', '[]', '{}', '00000000-0000-0000-0000-000000000000',
        {%- for form in f.values() %}
        {{ sql_string_literal(form) }}{{ "," if not loop.last }}
        {%- endfor %}
    )
    or {{ value }} rlike '^-?0+(\\.0+)?([eE][-+]?[0-9]+)?$'
    or {{ value }} rlike '^(AAAA)*(AA==|AAA=)?$'
    or {{ value }} rlike '^(1970-01-01T)?00:00:00(\\.0+)?Z$')
{%- endmacro %}
