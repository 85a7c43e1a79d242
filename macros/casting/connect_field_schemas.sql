{% macro connect_field_schemas(schema_fields) %}
    {#- map<column, struct<type, name, parameters>> of a Kafka Connect envelope: the fields of its
        `after` row struct, else of its `before` row struct. Null when the record has no schema
        (schemas.enable=false) and empty for `"schema": {}`. -#}
    map_from_entries(transform(
        filter(
            coalesce(
                element_at(filter({{ schema_fields }}, cf_f -> cf_f.field = 'after'), 1).fields,
                element_at(filter({{ schema_fields }}, cf_f -> cf_f.field = 'before'), 1).fields
            ),
            cf_c -> cf_c.field is not null
        ),
        cf_c -> struct(cf_c.field, struct(cf_c.type as type, cf_c.name as name, cf_c.parameters as parameters))
    ))
{%- endmacro %}
