{% macro tencent_dts_record_schema() %}
    {#- Spark DDL schema of one Tencent Cloud DTS flat record. `oldColumns`/`newColumns` are read
        as raw JSON text because their shape varies (an array aligned with `columns`, or an object
        keyed by column name); identifiers that may arrive as numbers or strings (`id`,
        `serverId`, ...) are read as text. `_corrupt` receives the raw text when the JSON is
        malformed or a typed field has the wrong type. -#}
    {{ return(
        "struct<id:string, version:string, messageType:string, fileName:string, `position`:string, "
        ~ "safePosition:string, `timestamp`:bigint, gtid:string, transactionId:string, "
        ~ "serverId:string, threadId:string, sourceType:string, sourceVersion:string, "
        ~ "schemaName:string, tableName:string, objectName:string, "
        ~ "columns:array<struct<name:string, dataTypeNumber:int, isKey:boolean, originalType:string>>, "
        ~ "oldColumns:string, newColumns:string, `sql`:string, executionTime:string, "
        ~ "heartbeatTimestamp:bigint, syncedGtid:string, fakeGtid:boolean, pkNames:array<string>, "
        ~ "readerTimestamp:bigint, _corrupt:string>"
    ) }}
{% endmacro %}
