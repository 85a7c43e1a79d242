{% macro connect_schema_fields() %}
    {#- Spark DDL type of the `schema.fields` array of a Kafka Connect JSON envelope, two levels
        deep: the envelope's fields (before, after, source, ...) and, inside each, the fields of
        the row struct with their Connect type, logical name, parameters (e.g. Decimal's
        `scale`), whether they are optional, and their default value (JSON text, in the value's
        own encoding). Deeper levels are not needed and not read. -#}
    {{ return(
        "array<struct<field:string, type:string, name:string, "
        ~ "fields:array<struct<field:string, type:string, name:string, parameters:map<string,string>, "
        ~ "optional:boolean, `default`:string>>>>"
    ) }}
{% endmacro %}
