{% macro kafka_river_canal_message_schema() %}
    {#- Spark DDL schema of one KafkaRiverCanal message (one row change). Column values stay text;
        `_corrupt` receives the raw text when the JSON is malformed or a field has the wrong type. -#}
    {{ return(
        "struct<binlog:string, `time`:bigint, canalTime:bigint, db:string, `table`:string, "
        ~ "event:string, keys:array<string>, xid:string, "
        ~ "columns:array<struct<n:string, t:string, v:string, origin_val:string, "
        ~ "`null`:boolean, updated:boolean>>, _corrupt:string>"
    ) }}
{% endmacro %}
