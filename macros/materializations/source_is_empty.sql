{% macro source_is_empty(source) %}
    {#- True when an incremental batch has no rows. The merge and append macros then write nothing,
        so a build with no new landed data leaves every table at its current Iceberg snapshot.
        The batch is a view, and the write reads it again (a merge twice: once to find the data
        files it touches, once to join), so it is cached first, on disk, and computed once; the
        `release_batch` post-hook releases it. -#}
    {%- do run_query("cache table " ~ source ~ " options ('storageLevel' 'DISK_ONLY')") -%}
    {%- set result = run_query("select 1 from " ~ source ~ " limit 1") -%}
    {{ return(result | length == 0) }}
{% endmacro %}
