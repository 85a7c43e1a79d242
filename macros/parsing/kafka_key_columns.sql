{% macro kafka_key_columns(key_map) %}
    {#- Names of the primary-key columns a Kafka record key announces, as array<string>, or null.
        `key_map` is the key parsed as JSON into map<string,string>:
        - a Kafka Connect envelope `{"schema": ..., "payload": {"id": 1}}`: the payload's field
          names, else (payload null) the field names of the key schema;
        - any other JSON object `{"id": 1}` (schemas.enable=false): its field names.
        Null for a missing key, JSON null, or a key that is not a JSON object (e.g. raw text).
        Only the names are taken: the key values come from the row image, decoded like the
        other columns. -#}
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
