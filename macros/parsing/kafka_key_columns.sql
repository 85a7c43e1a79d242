{% macro kafka_key_columns(key_map) %}
    case
        when {{ key_map }} is null or size({{ key_map }}) = 0 then null
        when size({{ key_map }}) = 2 and map_contains_key({{ key_map }}, 'schema')
            and map_contains_key({{ key_map }}, 'payload') then coalesce(
                map_keys(from_json({{ key_map }}['payload'], 'map<string,string>')),
                transform(
                    from_json({{ key_map }}['schema'], 'struct<fields:array<struct<field:string>>>').fields,
                    kk_f -> kk_f.field
                )
            )
        else map_keys({{ key_map }})
    end
{%- endmacro %}
