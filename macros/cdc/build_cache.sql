{% macro build_cache_relation() %}
    {#- The build cache: an Iceberg table of no rows in the build's schema whose table properties
        hold what a build remembers so as to skip work on inputs that did not change: each data
        test's last pass (`cdc_lake.pass.<test id>`, record_test_passes), the size of the key sets
        the tests cut to (tested_key_counts), the floor of each model's last batch (batch_floor) and
        each typed table's
        column list (`cdc_lake.typed_columns.<database>.<table>`, typed_columns). Every entry
        names the versions of the relations it was computed from, so a stale one is never used. -#}
    {{ return(api.Relation.create(schema=target.schema, identifier='cdc_build_cache', type='table')) }}
{% endmacro %}


{% macro create_build_cache() %}
    {#- on-run-start: the build cache table, if missing, also in dbt's relation cache. Its metadata
        keeps few old versions: each write is one metadata commit. -#}
    {%- if execute -%}
        {%- do run_query("create table if not exists " ~ build_cache_relation()
                         ~ " (note string) using iceberg comment 'The build cache: no rows; its table properties "
                         ~ "hold data test passes and typed column lists (macro build_cache_relation).' "
                         ~ "tblproperties ('format-version' = '2', "
                         ~ "'write.metadata.delete-after-commit.enabled' = 'true', "
                         ~ "'write.metadata.previous-versions-max' = '10')") -%}
        {#- dbt filled its relation cache before this hook: tell it, so that this build can write -#}
        {%- do adapter.cache_added(build_cache_relation()) -%}
    {%- endif -%}
{% endmacro %}


{% macro build_cache_get(key) %}
    {#- One entry of the build cache (one this invocation computed and has not written yet included,
        pending_build_cache_entries), or none (also while the cache table is missing: before the
        first build, and in commands that run no on-run-start hook, such as `dbt compile`; dbt has
        cached the build schema's relations, so asking costs no query). -#}
    {%- if load_relation(build_cache_relation()) is none -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set memo = build_memo() -%}
    {%- if 'build_cache' not in memo -%}
        {#- all entries in one catalog read; what another process writes during this build is
            seen by the next one, which only makes this build do work it could have skipped -#}
        {%- set entries = {} -%}
        {%- for name, value in run_query("show tblproperties " ~ build_cache_relation()) -%}
            {%- do entries.update({name: value}) -%}
        {%- endfor -%}
        {%- do memo.setdefault('build_cache', entries) -%}
    {%- endif -%}
    {%- set pending = pending_build_cache_entries() -%}
    {{ return(pending[key] if key in pending else memo['build_cache'].get(key)) }}
{% endmacro %}


{% macro build_cache_put(entries) %}
    {#- Writes entries (a mapping key -> value) of the build cache in one Iceberg metadata commit,
        no snapshot (two threads' commits retry each other, so neither is lost); nothing while the
        cache table is missing. -#}
    {%- if not entries or load_relation(build_cache_relation()) is none -%}
        {{ return('') }}
    {%- endif -%}
    {%- set properties = [] -%}
    {%- for key, value in entries | dictsort -%}
        {%- do properties.append(sql_string_literal(key) ~ ' = ' ~ sql_string_literal(value)) -%}
    {%- endfor -%}
    {%- do run_query("alter table " ~ build_cache_relation() ~ " set tblproperties (" ~ properties | join(', ') ~ ")") -%}
    {%- set memo = build_memo() -%}
    {%- if 'build_cache' in memo -%}
        {%- do memo['build_cache'].update(entries) -%}
    {%- endif -%}
{% endmacro %}


{% macro pending_build_cache_entries() %}
    {#- Build cache entries (key -> value) that models computed while they compiled (typed_columns),
        kept in the invocation's memo (build_memo) until the on-run-end writes them in one commit
        (record_test_passes): a model's compile reads the catalog but writes nothing. -#}
    {{ return(build_memo().setdefault('pending_build_cache_entries', {})) }}
{% endmacro %}


{% macro build_memo() %}
    {#- A dict that lives for one dbt invocation, shared by its threads: what a build has read from
        the catalog and may read again (build_cache_get, input_versions). Kept in dbt's `graph`
        context object, which dbt builds once per invocation; keyed by invocation_id, since a
        caller that reuses a parsed manifest reuses that object too. -#}
    {%- set memos = graph.setdefault('cdc_lake_build_memo', {}) -%}
    {%- for stale in memos.keys() | list if stale != invocation_id -%}
        {%- do memos.pop(stale, none) -%}
    {%- endfor -%}
    {{ return(memos.setdefault(invocation_id, {})) }}
{% endmacro %}


{% macro input_versions(node_ids, versions=none, views_only=false) %}
    {#- `relation=version` for every relation the nodes read, sorted: a table's current Iceberg
        snapshot, a view's SQL hash (spark__create_view_as) and, through the view, the versions of
        what it reads; an ephemeral model stands for what it reads. None when any version is
        unknown (a relation missing or not Iceberg). A view's hash comes from dbt's relation cache
        when the build has not re-created it, so only tables cost a query (`show tblproperties`),
        once each. What a data test's pass (test_fingerprint) and a cached typed column list
        (typed_columns) are valid for. `views_only`: the views alone, no query at all (what a
        data test cut to a batch requires unchanged since its last pass, batch_cut_allowed). -#}
    {%- set versions = {} if versions is none else versions -%}
    {%- for node_id in node_ids -%}
        {%- set node = graph.sources.get(node_id) or graph.nodes.get(node_id) -%}
        {%- if node is none -%}
            {{ return(none) }}
        {%- endif -%}
        {%- set materialized = node.config.materialized if node.resource_type == 'model' else 'table' -%}
        {%- set relation = api.Relation.create(schema=node.schema, identifier=node.alias or node.identifier) -%}
        {%- if materialized in ('view', 'ephemeral')
               and input_versions(node.depends_on.nodes, versions, views_only) is none -%}
            {{ return(none) }}
        {%- endif -%}
        {#- a view missing from dbt's relation cache (never built in this schema) has no version -#}
        {%- if materialized == 'view' and load_relation(relation) is none -%}
            {{ return(none) }}
        {%- endif -%}
        {%- if materialized != 'ephemeral' and relation | string not in versions
               and (materialized == 'view' or not views_only) -%}
            {%- set version = (view_sql_hash(relation) or relation_property(relation, 'cdc_lake.view_sql_hash'))
                              if materialized == 'view' else table_version(relation) -%}
            {%- if version is none -%}
                {{ return(none) }}
            {%- endif -%}
            {%- do versions.update({relation | string: version}) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set lines = [] -%}
    {%- for name, version in versions | dictsort -%}
        {%- do lines.append(name ~ '=' ~ version) -%}
    {%- endfor -%}
    {{ return(lines) }}
{% endmacro %}


{% macro table_version(relation) %}
    {#- An input table's current Iceberg snapshot id, read from the catalog once per invocation.
        Only input_versions asks, and only for relations the asking node depends on, which dbt
        runs to the end before it starts the node: nothing in this invocation writes the table
        after the first ask. (A landing in another process may; the next build sees it.) -#}
    {%- set versions = build_memo().setdefault('table_versions', {}) -%}
    {%- if relation | string not in versions -%}
        {%- do versions.update({relation | string: relation_property(relation, 'current-snapshot-id')}) -%}
    {%- endif -%}
    {{ return(versions[relation | string]) }}
{% endmacro %}


{% macro relation_property(relation, key) %}
    {#- One table property of an existing relation, read from the catalog (no Spark job); none when
        the property is missing. -#}
    {%- for name, value in run_query("show tblproperties " ~ relation ~ " (" ~ sql_string_literal(key) ~ ")")
           if name == key and 'does not have property' not in value -%}
        {{ return(value) }}
    {%- endfor -%}
    {{ return(none) }}
{% endmacro %}
