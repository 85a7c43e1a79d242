{% macro cdc_compact() %}
    {%- for node in graph.nodes.values() | list + graph.sources.values() | list
        if (node.resource_type == 'model' and node.config.materialized in ('incremental', 'table'))
        or (node.resource_type == 'source' and node.source_name == 'cdc_raw' and node.name.startswith('raw_')) %}
        {%- set relation = adapter.get_relation(node.database, node.schema, node.identifier or node.alias) %}
        {%- if relation is not none %}
            {%- set name = relation.schema ~ '.' ~ relation.identifier %}
            {%- set before = run_query('select count(*), count_if(content <> 0) from ' ~ name ~ '.files').rows[0] %}
            {%- set files_before, deletes_before = before[0] | int, before[1] | int %}
            {%- set files_after = files_before %}
            {#- One data file and no delete file: a rewrite (at least two input files) would change
                nothing, so the table costs this one count. -#}
            {%- if files_before > 1 or deletes_before > 0 %}
                {%- do run_query(cdc_rewrite_data_files_sql(name, "'min-input-files', '2', 'delete-file-threshold', '1'")) %}
                {#- Delete files whose data files were all rewritten are left dangling, and Iceberg's
                    rewrite_position_delete_files fails on tables with map columns (the images). The
                    pass above judged danglingness before its own rewrite; a second, whole-table pass
                    sees the deletes dangling and drops them. -#}
                {%- if deletes_before > 0 and cdc_count(name ~ '.delete_files') > 0 %}
                    {%- do run_query(cdc_rewrite_data_files_sql(name, "'rewrite-all', 'true'")) %}
                {%- endif %}
                {%- set files_after = cdc_count(name ~ '.files') %}
            {%- endif %}
            {{ log(name ~ ': ' ~ files_before ~ ' data and delete files, now ' ~ files_after, info=true) }}
        {%- endif %}
    {%- endfor %}
{% endmacro %}

{% macro cdc_count(relation) %}
    {{ return(run_query('select count(*) from ' ~ relation).columns[0].values()[0] | int) }}
{% endmacro %}

{% macro cdc_rewrite_data_files_sql(table, options, where=none) %}
    {{ return(
        "call spark_catalog.system.rewrite_data_files(table => '" ~ table ~ "', "
        ~ ("where => '" ~ where ~ "', " if where else "")
        ~ "options => map(" ~ options ~ ", 'remove-dangling-deletes', 'true', 'use-starting-sequence-number', 'false'))"
    ) }}
{% endmacro %}

{% macro cdc_compact_latest(max_files=2, max_manifests=4) %}
    {%- set node = graph.nodes.values() | selectattr('name', 'equalto', 'cdc_history') | first %}
    {%- set relation = adapter.get_relation(node.database, node.schema, node.alias) %}
    {%- if relation is none %}
        {{ return(none) }}
    {%- endif %}
    {%- set name = relation.schema ~ '.' ~ relation.identifier %}
    {%- set latest_files = name ~ '.files where partition.is_latest' %}
    {%- set files_before = cdc_count(latest_files) %}
    {%- if files_before > max_files | int %}
        {%- do run_query(cdc_rewrite_data_files_sql(
            name, "'min-input-files', '2', 'delete-file-threshold', '1'", where='is_latest')) %}
        {{ log(name ~ ' latest versions: ' ~ files_before ~ ' data and delete files, now '
               ~ cdc_count(latest_files), info=true) }}
    {%- endif %}
    {#- a manifest's partition summary bounds is_latest: its upper bound is true if it lists a latest version -#}
    {%- set latest_manifests = name ~ ".manifests where exists(partition_summaries, p -> p.upper_bound = 'true')" %}
    {%- set manifests_before = cdc_count(latest_manifests) %}
    {%- if manifests_before > max_manifests | int %}
        {%- do run_query("call spark_catalog.system.rewrite_manifests(table => '" ~ name ~ "')") %}
        {{ log(name ~ ' manifests listing latest versions: ' ~ manifests_before ~ ', now '
               ~ cdc_count(latest_manifests), info=true) }}
    {%- endif %}
{% endmacro %}
