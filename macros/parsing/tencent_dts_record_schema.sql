{% macro tencent_dts_record_schema() %}
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
