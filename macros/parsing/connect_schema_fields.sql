{% macro connect_schema_fields() %}
    {{ return(
        "array<struct<field:string, type:string, name:string, "
        ~ "fields:array<struct<field:string, type:string, name:string, parameters:map<string,string>, "
        ~ "optional:boolean, `default`:string>>>>"
    ) }}
{% endmacro %}
