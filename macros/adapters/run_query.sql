{% macro run_query(sql) %}
    {% call statement("run_query_statement", fetch_result=_statement_returns_rows(sql), auto_begin=false) %}
        {{ sql }}
    {% endcall %}
    {% do return(load_result("run_query_statement").table) %}
{% endmacro %}
