{% macro kafka_river_canal_message_schema() %}
    {{ return(
        "struct<binlog:string, `time`:bigint, canalTime:bigint, db:string, `table`:string, "
        ~ "event:string, keys:array<string>, xid:string, "
        ~ "columns:array<struct<n:string, t:string, v:string, origin_val:string, "
        ~ "`null`:boolean, updated:boolean>>, _corrupt:string>"
    ) }}
{% endmacro %}
