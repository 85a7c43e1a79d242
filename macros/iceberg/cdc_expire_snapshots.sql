{% macro cdc_expire_snapshots(older_than_hours=168, retain_last=10, orphan_older_than_hours=72) %}
    {%- if orphan_older_than_hours | float < 24 %}
        {{ exceptions.raise_compiler_error(
            "cdc_expire_snapshots: orphan_older_than_hours must be at least 24 (Iceberg's limit: younger "
            ~ "files may belong to a commit in flight)") }}
    {%- endif %}
    {%- if var('cdc_raw_retention_days', none) is not none %}
        {%- do cdc_raw_retention() %}
    {%- endif %}
    {%- set now = run_query("select cast(current_timestamp() as string)").columns[0].values()[0] %}
    {%- set expire_before = cdc_hours_before(now, older_than_hours) %}
    {%- set orphans_before = cdc_hours_before(now, orphan_older_than_hours) %}
    {%- for name in cdc_iceberg_tables() %}
        {%- set snapshots_before = cdc_count(name ~ '.snapshots') %}
        {%- set expired_files, snapshots_after = 0, snapshots_before %}
        {#- A table with at most retain_last snapshots has none to expire; its orphan files are
            still looked for (a killed write leaves them whatever the snapshot count). -#}
        {%- if snapshots_before > retain_last | int %}
            {%- set expired = run_query(
                "call spark_catalog.system.expire_snapshots(table => '" ~ name ~ "', older_than => timestamp '"
                ~ expire_before ~ "', retain_last => " ~ retain_last ~ ")") %}
            {%- set expired_files, snapshots_after = expired.rows[0] | map('int') | sum, cdc_count(name ~ '.snapshots') %}
        {%- endif %}
        {%- set orphans = run_query(
            "call spark_catalog.system.remove_orphan_files(table => '" ~ name ~ "', older_than => timestamp '"
            ~ orphans_before ~ "')") %}
        {{ log(name ~ ': ' ~ snapshots_before ~ ' snapshots, now ' ~ snapshots_after ~ '; ' ~ expired_files
               ~ ' files of expired snapshots and ' ~ (orphans.rows | length) ~ ' orphan files removed', info=true) }}
    {%- endfor %}
{% endmacro %}

{% macro cdc_hours_before(timestamp_text, hours) %}
    {%- set parsed = modules.datetime.datetime.strptime(timestamp_text[:19], '%Y-%m-%d %H:%M:%S') %}
    {{ return((parsed - modules.datetime.timedelta(hours=hours | float)).strftime('%Y-%m-%d %H:%M:%S')) }}
{% endmacro %}

{% macro cdc_iceberg_tables() %}
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
