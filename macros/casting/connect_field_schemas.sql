{% macro connect_field_schemas(schema_fields) %}
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
