{% macro run_query(sql) %}
    {#- dbt's run_query, fetching a result only from statements that return rows.
        Over the Spark Thrift Server (PyHive), a statement without a result set (DDL, INSERT, MERGE)
        reports a schema with no columns and fetching it fails with "'NoneType' object is not
        iterable" (dbt-adapters#481). Such statements run with fetch_result=false and return an
        empty table, on every target, so no macro depends on the session method. -#}
    {% call statement("run_query_statement", fetch_result=_statement_returns_rows(sql), auto_begin=false) %}
        {{ sql }}
    {% endcall %}
    {% do return(load_result("run_query_statement").table) %}
{% endmacro %}
