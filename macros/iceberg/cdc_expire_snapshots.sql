{% macro cdc_expire_snapshots(older_than_hours=168, retain_last=10, orphan_older_than_hours=72) %}
    {#- `dbt run-operation cdc_expire_snapshots`: Iceberg's snapshot upkeep for every table the
        project writes or reads (models, seeds, the raw tables, the build cache). Expires the
        snapshots older than `older_than_hours` (keeping at least the last `retain_last` of each
        table) with their unused data, delete and metadata files, then removes orphan files
        (written by a commit that never happened) older than `orphan_older_than_hours` (at least
        24: Iceberg refuses less, since a commit in flight has files no snapshot names yet). Rows
        do not change; time travel (`version as of`) reaches back `older_than_hours`. Safe while
        landings and builds run. -#}
    {%- if orphan_older_than_hours | float < 24 %}
        {{ exceptions.raise_compiler_error(
            "cdc_expire_snapshots: orphan_older_than_hours must be at least 24 (Iceberg's limit: younger "
            ~ "files may belong to a commit in flight)") }}
    {%- endif %}
    {%- set now = run_query("select cast(current_timestamp() as string)").columns[0].values()[0] %}
    {%- set expire_before = cdc_hours_before(now, older_than_hours) %}
    {%- set orphans_before = cdc_hours_before(now, orphan_older_than_hours) %}
    {%- for name in cdc_iceberg_tables() %}
        {%- set snapshots_before = cdc_count(name ~ '.snapshots') %}
        {%- set expired = run_query(
            "call spark_catalog.system.expire_snapshots(table => '" ~ name ~ "', older_than => timestamp '"
            ~ expire_before ~ "', retain_last => " ~ retain_last ~ ")") %}
        {%- set orphans = run_query(
            "call spark_catalog.system.remove_orphan_files(table => '" ~ name ~ "', older_than => timestamp '"
            ~ orphans_before ~ "')") %}
        {{ log(name ~ ': ' ~ snapshots_before ~ ' snapshots, now ' ~ cdc_count(name ~ '.snapshots') ~ '; '
               ~ (expired.rows[0] | map('int') | sum)
               ~ ' files of expired snapshots and ' ~ (orphans.rows | length) ~ ' orphan files removed', info=true) }}
    {%- endfor %}
{% endmacro %}

{% macro cdc_hours_before(timestamp_text, hours) %}
    {#- `timestamp_text` (Spark's `yyyy-MM-dd HH:mm:ss[.f]`) minus `hours`, as the same text. -#}
    {%- set parsed = modules.datetime.datetime.strptime(timestamp_text[:19], '%Y-%m-%d %H:%M:%S') %}
    {{ return((parsed - modules.datetime.timedelta(hours=hours | float)).strftime('%Y-%m-%d %H:%M:%S')) }}
{% endmacro %}

{% macro cdc_iceberg_tables() %}
    {#- `schema.table` of every existing Iceberg table the project builds (incremental and table
        models, seeds), reads (its sources: the raw tables) or keeps (the build cache). -#}
    {%- set names = [] %}
    {%- for node in graph.nodes.values() | list + graph.sources.values() | list
        if node.resource_type in ('model', 'seed', 'source')
        and (node.resource_type != 'model' or node.config.materialized in ('incremental', 'table')) %}
        {%- set relation = adapter.get_relation(node.database, node.schema, node.identifier or node.alias) %}
        {%- if relation is not none %}
            {%- do names.append(relation.schema ~ '.' ~ relation.identifier) %}
        {%- endif %}
    {%- endfor %}
    {%- set cache = build_cache_relation() %}
    {%- if adapter.get_relation(cache.database, cache.schema, cache.identifier) is not none %}
        {%- do names.append(cache.schema ~ '.' ~ cache.identifier) %}
    {%- endif %}
    {{ return(names | unique | list) }}
{% endmacro %}
