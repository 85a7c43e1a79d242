{% macro connect_schema_fields() %}
    {#- Spark DDL type of the `schema.fields` array of a Kafka Connect JSON envelope, two levels
        deep: the envelope's fields (before, after, source, ...) and, inside each, the fields of
        the row struct with their Connect type, logical name and parameters (e.g. Decimal's
        `scale`). Deeper levels are not needed and not read. -#}
    {{ return(
        "array<struct<field:string, type:string, name:string, "
        ~ "fields:array<struct<field:string, type:string, name:string, parameters:map<string,string>>>>>"
    ) }}
{% endmacro %}
