{% macro debezium_message_schema() %}
    {#- Spark DDL schema of one Kafka value of the `debezium` format, whatever its shape:
        - the JsonConverter envelope `{"schema": ..., "payload": ...}` (schemas.enable=true),
        - the bare payload (schemas.enable=false), read from the same top-level fields,
        - dtle's schema-change record (`databaseName`, `ddl`, `position`) and Debezium's own
          schema-change payload (`databaseName`, `ddl`, `source`),
        - tombstones written as text (`{"schema":null,"payload":null}`), heartbeats (`ts_ms` only)
          and transaction metadata (`status` BEGIN/END).
        Row images are read as text (the parser's compact re-writing of the object), then as
        map<string,string> by the base model: the text tells a JSON string from a JSON number
        (see `connect_images_text`); decoding by the schema's logical types happens after. `_corrupt` receives malformed text. -#}
    {{ return(
        "struct<`schema`:struct<fields:" ~ connect_schema_fields() ~ ">, "
        ~ "payload:struct<" ~ debezium_payload_fields() ~ ">, "
        ~ debezium_payload_fields() ~ ", _corrupt:string>"
    ) }}
{% endmacro %}


{% macro debezium_payload_fields() %}
    {#- The fields of a Debezium/dtle payload, as a Spark DDL field list (see
        `debezium_message_schema`). `source` carries MySQL (file, pos, row, gtid), dtle (ts_sec,
        server) and PostgreSQL (schema, lsn, sequence: the JSON text `["<last commit LSN>","<LSN>"]`,
        txId) positions; `snapshot` is text because Debezium sends
        a string enum ("true", "last", ...) and dtle a boolean. -#}
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
    {#- Names of the fields of `debezium_payload_fields`, in order: used to build the payload
        struct from the top-level fields of a schema-less (bare payload) record. -#}
    {{ return(['before', 'after', 'source', 'op', 'ts_ms', 'databaseName', 'schemaName', 'ddl',
               'tableChanges', 'position', 'status']) }}
{% endmacro %}
