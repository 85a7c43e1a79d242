{% macro connect_array_text(value, items) %}
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
