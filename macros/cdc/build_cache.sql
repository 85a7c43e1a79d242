{% macro build_cache_relation() %}
    {{ return(api.Relation.create(schema=target.schema, identifier='cdc_build_cache', type='table')) }}
{% endmacro %}

{% macro create_build_cache() %}
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
    {{ return(memo['build_cache'].get(key)) }}
{% endmacro %}

{% macro build_cache_put(entries) %}
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

{% macro cache_note(key, value) %}
    {{ return(' /* cdc_lake cache: ' ~ (tojson({key: value}) | replace('*/', '*\\/')) ~ ' */') }}
{% endmacro %}

{% macro without_cache_notes(sql) %}
    {{ return(modules.re.sub(' /\\* cdc_lake cache: .*? \\*/', '', sql)) }}
{% endmacro %}

{% macro cache_notes(results) %}
    {%- set found = [] -%}
    {%- for result in results if result.status not in ('error', 'skipped') -%}
        {%- for note in modules.re.findall('/\\* cdc_lake cache: (.*?) \\*/', result.node.compiled_code or '') -%}
            {%- do found.extend(fromjson(note).items()) -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return(found) }}
{% endmacro %}

{% macro build_memo() %}
    {%- set memos = graph.setdefault('cdc_lake_build_memo', {}) -%}
    {%- for stale in memos.keys() | list if stale != invocation_id -%}
        {%- do memos.pop(stale, none) -%}
    {%- endfor -%}
    {{ return(memos.setdefault(invocation_id, {})) }}
{% endmacro %}

{% macro input_versions(node_ids, versions=none, views_only=false) %}
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
    {%- set versions = build_memo().setdefault('table_versions', {}) -%}
    {%- if relation | string not in versions -%}
        {%- do versions.update({relation | string: relation_property(relation, 'current-snapshot-id')}) -%}
    {%- endif -%}
    {{ return(versions[relation | string]) }}
{% endmacro %}

{% macro relation_property(relation, key) %}
    {%- for name, value in run_query("show tblproperties " ~ relation ~ " (" ~ sql_string_literal(key) ~ ")")
           if name == key and 'does not have property' not in value -%}
        {{ return(value) }}
    {%- endfor -%}
    {{ return(none) }}
{% endmacro %}
