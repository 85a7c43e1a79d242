{% macro lindorm_message_schema() %}
    {#- Spark DDL schema of one Lindorm change record (Debezium format v2): the envelope
        `{"schema": ..., "payload": ...}` or a bare payload. Row images are read as text, then as
        map<string,string> by the base model (see `connect_images_text`); `_corrupt` receives
        malformed text. -#}
    {{ return(
        "struct<`schema`:struct<fields:" ~ connect_schema_fields() ~ ">, "
        ~ "payload:struct<" ~ lindorm_payload_fields() ~ ">, "
        ~ lindorm_payload_fields() ~ ", _corrupt:string>"
    ) }}
{% endmacro %}


{% macro lindorm_payload_fields() %}
    {#- The fields of a Lindorm payload as a Spark DDL field list: op, ts_ms (written to Kafka),
        before, after, source {version, db (cluster), namespace, table, ts_ms (written to Lindorm)}. -#}
    {{ return(
        "op:string, ts_ms:bigint, before:string, after:string, "
        ~ "source:struct<version:string, db:string, namespace:string, `table`:string, ts_ms:bigint>"
    ) }}
{% endmacro %}


{% macro lindorm_payload_field_names() %}
    {#- Names of the fields of `lindorm_payload_fields`, in order. -#}
    {{ return(['op', 'ts_ms', 'before', 'after', 'source']) }}
{% endmacro %}
