{% macro canal_flat_message_schema() %}
    {#- Spark DDL schema of one Canal FlatMessage. Values are read as text (map<string,string>), so
        a JSON null stays a SQL NULL and numbers keep their digits. `_corrupt` receives the raw text
        when the JSON is malformed or a field has the wrong type. -#}
    {{ return(
        "struct<id:bigint, database:string, `table`:string, pkNames:array<string>, isDdl:boolean, "
        ~ "type:string, es:bigint, ts:bigint, `sql`:string, gtid:string, "
        ~ "sqlType:map<string,int>, mysqlType:map<string,string>, "
        ~ "data:array<map<string,string>>, old:array<map<string,string>>, _corrupt:string>"
    ) }}
{% endmacro %}
