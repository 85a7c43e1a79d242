{% macro lindorm_message_schema() %}
    {{ return(
        "struct<`schema`:struct<fields:" ~ connect_schema_fields() ~ ">, "
        ~ "payload:struct<" ~ lindorm_payload_fields() ~ ">, "
        ~ lindorm_payload_fields() ~ ", _corrupt:string>"
    ) }}
{% endmacro %}

{% macro lindorm_payload_fields() %}
    {{ return(
        "op:string, ts_ms:bigint, before:string, after:string, "
        ~ "source:struct<version:string, db:string, namespace:string, `table`:string, ts_ms:bigint>"
    ) }}
{% endmacro %}

{% macro lindorm_payload_field_names() %}
    {{ return(['op', 'ts_ms', 'before', 'after', 'source']) }}
{% endmacro %}
