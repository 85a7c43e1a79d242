{% macro debezium_message_schema() %}
    {{ return(
        "struct<`schema`:struct<fields:" ~ connect_schema_fields() ~ ">, "
        ~ "payload:struct<" ~ debezium_payload_fields() ~ ">, "
        ~ debezium_payload_fields() ~ ", _corrupt:string>"
    ) }}
{% endmacro %}

{% macro debezium_payload_fields() %}
    {{ return(
        "before:string, after:string, "
        ~ "source:struct<version:string, connector:string, name:string, server:string, server_id:bigint, "
        ~ "ts_ms:bigint, ts_sec:bigint, snapshot:string, db:string, `schema`:string, `table`:string, "
        ~ "gtid:string, file:string, pos:bigint, `row`:int, lsn:bigint, `sequence`:string, txId:bigint, "
        ~ "query:string>, "
        ~ "op:string, ts_ms:bigint, databaseName:string, schemaName:string, ddl:string, "
        ~ "tableChanges:array<struct<type:string, id:string>>, "
        ~ "position:struct<ts_sec:bigint, file:string, pos:bigint, gtids:string, snapshot:string>, "
        ~ "status:string"
    ) }}
{% endmacro %}

{% macro debezium_payload_field_names() %}
    {{ return(['before', 'after', 'source', 'op', 'ts_ms', 'databaseName', 'schemaName', 'ddl',
               'tableChanges', 'position', 'status']) }}
{% endmacro %}
