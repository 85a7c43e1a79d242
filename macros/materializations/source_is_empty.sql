{% macro source_is_empty(source) %}
    {#- True when an incremental batch has no rows. The merge and append macros then write nothing,
        so a build with no new landed data leaves every table at its current Iceberg snapshot. -#}
    {%- set result = run_query("select 1 from " ~ source ~ " limit 1") -%}
    {{ return(result | length == 0) }}
{% endmacro %}
