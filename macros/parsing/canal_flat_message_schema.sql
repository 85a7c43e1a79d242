{% macro canal_flat_message_schema() %}
    {{ return(
        "struct<id:bigint, database:string, `table`:string, pkNames:array<string>, isDdl:boolean, "
        ~ "type:string, es:bigint, ts:bigint, `sql`:string, gtid:string, "
        ~ "sqlType:map<string,int>, mysqlType:map<string,string>, "
        ~ "data:array<map<string,string>>, old:array<map<string,string>>, _corrupt:string>"
    ) }}
{% endmacro %}
