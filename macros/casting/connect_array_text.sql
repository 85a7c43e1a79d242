{% macro connect_array_text(value, items) %}
    {#- Canonical text of a Kafka Connect array (PostgreSQL arrays): a compact JSON array whose
        elements are decoded by the element schema `items` (struct<type, name, parameters>; see
        `connect_array_items`) with `connect_element_text`, each written in the JSON type the
        converter gave it: integers, decimals and finite floats as JSON numbers (their canonical
        digits), booleans as `true` / `false`, NULL as `null`, everything else (text, NaN and the
        infinities, and the canonical text of dates, times, timestamps, bytes, JSON, ...) as a
        JSON string. An array of plain integers or text is thus the JSON as sent. Null
        (undecodable) when the value is not a JSON array, there is no element schema, or an
        element does not decode.
        How: `items`, the elements and their JSON text (which says which were JSON strings) are
        bound once; each element's text is written as `to_json` writes it in a struct
        (`{"s":"<text>"}`; `{}` when it does not decode), joined with commas (array_join: linear;
        a fold that appended each element to the text so far copied it once per element, 35 s for
        100,000 elements); the finish unwraps them, bares numbers and booleans by the element type,
        and gives null when one was `{}`. Spark's analyzer resolves a function call only after its
        arguments, one nesting level per pass, and a lambda only after its function's arguments;
        the base models nest this deep, so the nesting here is kept shallow: operators (`||`,
        CASE) where they do. `value` is repeated: pass a lambda variable. -#}
    {%- set token = "'\"(?:[^\"\\\\\\\\]++|\\\\\\\\.)*+\"?|[^,\\\\[\\\\]\\\\s]+'" -%}
    transform(
        array(named_struct(
            'items', {{ items }},
            'elements', from_json({{ value }}, 'array<string>', {{ json_read_options() }}),
            'tokens', regexp_extract_all({{ value }}, {{ token }}, 0)
        )),
        ca -> transform(
            array(case when ca.elements is not null and ca.items is not null then array_join(transform(
                ca.elements,
                (ca_e, ca_i) -> case
                    when ca_e is null then 'null'
                    else to_json(named_struct('s',
                        {{ connect_element_text('ca_e', 'ca.items', 'ca.tokens[ca_i]') | indent(24) }}
                    ))
                end
            ), ',') end),
            ca_json -> case
                {# an element that did not decode: `{}` outside the strings #}
                when array_contains(regexp_extract_all(ca_json, '"(?:[^"\\\\]++|\\\\.)*+"?|[{][}]', 0), '{}') then null
                else '[' || regexp_replace(
                    regexp_replace(ca_json, '[{]"s":("(?:[^"\\\\]++|\\\\.)*+")[}]', '$1'),
                    case {{ connect_decoder('ca.items') | indent(20) }}
                        when 'boolean' then '"(true|false)"'
                        when 'integer' then '"(-?[0-9][^"]*)"'
                        when 'decimal' then '"(-?[0-9][^"]*)"'
                        when 'variable_scale_decimal' then '"(-?[0-9][^"]*)"'
                        when 'float' then '"(-?[0-9][^"]*)"'
                        when 'double' then '"(-?[0-9][^"]*)"'
                        else '(?!)'
                    end,
                    '$1'
                ) || ']'
            end
        )[0]
    )[0]
{%- endmacro %}


{% macro connect_element_text(value, items, sent_token) %}
    {#- Canonical text of one non-null element of a Kafka Connect array (`connect_array_text`),
        decoded by the element schema `items` as `connect_value_text` decodes a field, but
        booleans as `true` / `false`: integers, floats, decimals (base64, or an integer JSON
        number), text, JSON, bytes, dates, times, timestamps, zoned times and timestamps and
        geometry. What PostgreSQL's connector never puts in an array (bits, intervals, arrays), a
        decimal of more than 8 bytes (its arithmetic nests too deep for Spark's analyzer here) and
        a Decimal sent as a JSON number with a fraction (Spark has read it through a double) give
        null: undecodable. `sent_token`: the element's JSON text (a JSON string starts with `"`).
        One simple CASE on the element's decoder tag, evaluated once. `value` and `items` are
        repeated. -#}
    {%- set v = value -%}
    {%- set b64_hex = "hex(try_to_binary(" ~ v ~ ", 'base64'))" -%}
    {%- set number = "'^-?[0-9]+(\\\\.[0-9]+)?([eE][-+]?[0-9]+)?$'" -%}
    {%- set scale = "cast(" ~ items ~ ".parameters['scale'] as int)" -%}
    case {{ connect_decoder(items) | indent(4) }}
        when 'text' then {{ v }}
        when 'integer' then case when {{ v }} rlike '^-?[0-9]+$' then {{ v }} end
        when 'float' then case
            when {{ v }} rlike {{ number }} or {{ v }} in ('NaN', 'Infinity', '-Infinity')
                then cast(try_cast({{ v }} as float) as string)
        end
        when 'double' then case
            when {{ v }} rlike {{ number }} or {{ v }} in ('NaN', 'Infinity', '-Infinity')
                then cast(try_cast({{ v }} as double) as string)
        end
        when 'boolean' then case when {{ v }} in ('true', 'false') then {{ v }} end
        when 'json' then {{ mysql_json_text(v) }}
        when 'decimal' then case
            when {{ sent_token }} like '"%' or {{ sent_token }} is null then
                {{ scaled_decimal_text(twos_complement_text(b64_hex, short=true), items ~ ".parameters['scale']") | indent(16) }}
            {# a JSON number: exact only as an integer (Spark has read a fraction as a double) #}
            when {{ v }} rlike '^-?[0-9]+$' then {{ v }} || case
                when {{ scale }} > 0 then '.' || repeat('0', {{ scale }}) else ''
            end
        end
        when 'variable_scale_decimal' then {{ scaled_decimal_text(
            twos_complement_text("hex(try_to_binary(get_json_object(" ~ v ~ ", '$.value'), 'base64'))", short=true),
            "get_json_object(" ~ v ~ ", '$.scale')") | indent(8) }}
        when 'bytes' then lower({{ b64_hex }})
        when 'geometry' then lower(
            array_join(reverse(regexp_extract_all(
                lpad(hex(coalesce(cast(get_json_object({{ v }}, '$.srid') as bigint), 0)), 8, '0'), '..', 0
            )), '')
            || hex(try_to_binary(get_json_object({{ v }}, '$.wkb'), 'base64'))
        )
        when 'epoch_day' then {{ epoch_day_text(v) }}
        when 'epoch_milli' then {{ epoch_milli_text(v) }}
        when 'epoch_micro' then {{ epoch_micro_text(v) }}
        when 'zoned_timestamp' then {{ zoned_timestamp_text(v) }}
        when 'time_milli' then {{ duration_time_text(v, 1000, 3) }}
        when 'time_micro' then {{ duration_time_text(v, 1000000, 6) }}
        when 'zoned_time' then {{ zoned_time_text(v) }}
    end
{%- endmacro %}
