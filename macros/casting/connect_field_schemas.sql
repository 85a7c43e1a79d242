{% macro connect_field_schemas(schema_fields) %}
    {#- map<column, struct<type, name, parameters, optional, default_value, path>> of a Kafka
        Connect envelope: the fields of its `after` row struct, else of its `before` row struct, in
        order. `default_value` is the field's default as JSON text: what JsonConverter writes for a
        null value of the field, and Debezium for a NOT NULL column it was not sent. `path`, for an
        array field only, is the field's JSON path in the record (`$.schema.fields[1].fields[4]`),
        where `connect_array_items` reads its element schema, which the parsed envelope
        (`connect_schema_fields`) does not hold; should it hold it (`items`), that is passed on as
        `items`. Null when the record has no schema (schemas.enable=false) or its schema no row
        struct. -#}
    {%- set s = schema_fields -%}
    {%- set after = "array_position(" ~ s ~ ".field, 'after')" -%}
    {%- set before = "array_position(" ~ s ~ ".field, 'before')" -%}
    {%- set row = "(case when " ~ s ~ "[" ~ after ~ " - 1].fields is not null then " ~ after ~ " else " ~ before ~ " end)" -%}
    map_from_entries(filter(
        transform(
            {{ s }}[{{ row }} - 1].fields,
            (cf_c, cf_j) -> struct(cf_c.field, struct(
                cf_c.type as type, cf_c.name as name, cf_c.parameters as parameters,
                cf_c.optional as optional, cf_c.`default` as default_value,
                {%- if 'items:' in connect_schema_fields() %}
                cf_c.items as items,
                {%- endif %}
                case when cf_c.type = 'array' then
                    '$.schema.fields[' || cast({{ row }} - 1 as string) || '].fields[' || cast(cf_j as string) || ']'
                end as path
            ))
        ),
        cf_e -> cf_e.field is not null
    ))
{%- endmacro %}
