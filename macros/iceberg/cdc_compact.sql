{% macro cdc_compact() %}
    {#- `dbt run-operation cdc_compact`: compacts every Iceberg table this project builds and the
        raw tables it reads. Incremental runs and landings add small data files (a following
        consumer a file per micro-batch), and the merge-on-read MERGEs add delete files that
        every reader must apply; this rewrites each table's small files and the data files that
        carry deletes into full-size files, and drops the delete files no data file needs any more.
        The rows do not change. Run it from time to time (e.g. hourly), while no build writes;
        landings may go on (they only append). Of the raw schema, only the landed records' tables:
        the consumer updates kafka_end_offsets in place, which a rewrite under it would fail. -#}
    {%- for node in graph.nodes.values() | list + graph.sources.values() | list
        if (node.resource_type == 'model' and node.config.materialized in ('incremental', 'table'))
        or (node.resource_type == 'source' and node.source_name == 'cdc_raw' and node.name.startswith('raw_')) %}
        {%- set relation = adapter.get_relation(node.database, node.schema, node.identifier or node.alias) %}
        {%- if relation is not none %}
            {%- set name = relation.schema ~ '.' ~ relation.identifier %}
            {%- set files_before = cdc_count(name ~ '.files') %}
            {%- do run_query(cdc_rewrite_data_files_sql(name, "'min-input-files', '2', 'delete-file-threshold', '1'")) %}
            {#- Delete files whose data files were all rewritten are left dangling, and Iceberg's
                rewrite_position_delete_files fails on tables with map columns (the images). The
                pass above judged danglingness before its own rewrite; a second, whole-table pass
                sees the deletes dangling and drops them. -#}
            {%- if cdc_count(name ~ '.delete_files') > 0 %}
                {%- do run_query(cdc_rewrite_data_files_sql(name, "'rewrite-all', 'true'")) %}
            {%- endif %}
            {{ log(name ~ ': ' ~ files_before ~ ' data and delete files, now ' ~ cdc_count(name ~ '.files'), info=true) }}
        {%- endif %}
    {%- endfor %}
{% endmacro %}

{% macro cdc_count(relation) %}
    {#- count(*) of a relation (which may end in a `where` filter), as an integer. -#}
    {{ return(run_query('select count(*) from ' ~ relation).columns[0].values()[0] | int) }}
{% endmacro %}

{% macro cdc_rewrite_data_files_sql(table, options, where=none) %}
    {#- Iceberg's rewrite_data_files call for `table` with extra `options` ('key', 'value' pairs),
        of the rows matching the SQL filter `where` if given (e.g. one partition); the new files
        take their commit's sequence number, so the deletes they absorbed dangle. -#}
    {{ return(
        "call spark_catalog.system.rewrite_data_files(table => '" ~ table ~ "', "
        ~ ("where => '" ~ where ~ "', " if where else "")
        ~ "options => map(" ~ options ~ ", 'remove-dangling-deletes', 'true', 'use-starting-sequence-number', 'false'))"
    ) }}
{% endmacro %}

{% macro cdc_compact_latest(max_files=2, max_manifests=4) %}
    {#- `dbt run-operation cdc_compact_latest`: compacts the partition of cdc_history that
        cdc_current and every scheduled build read (`is_latest`, each key's latest version) once it
        holds more than `max_files` data and delete files. Each MERGE adds a few to it, and a read
        applies every delete file to the data files it may cover: on the soak's lake, ten builds'
        files made the analyst's query on cdc_current 0.39 s, and 0.16 s once compacted; seven
        files still 0.31 s. The partition is a small part of the history, so this is cheap enough
        to run after every scheduled build (`cdc-lake build --upkeep-every`: 3.6 s on the soak's
        lake). Every commit also adds manifests, and each that lists a file of the partition
        (all of them, as MERGEs and rewrites touch both partitions) is read to plan every query:
        once more than `max_manifests` do, the table's manifests are rewritten, grouped by
        partition (on the soak's lake, 12 such manifests made the query 0.17 s, 0.11-0.14 s once
        rewritten). `cdc_compact` does every table. -#}
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
