{% macro spark__create_view_as(relation, sql) -%}
    {%- set sql_hash = local_md5(without_cache_notes(sql)) -%}
    {%- if execute and not should_full_refresh() and view_sql_hash(relation) == sql_hash -%}
        {{ return("select 'view " ~ relation ~ " unchanged' as skipped") }}
    {%- endif -%}
    {%- if execute -%}
        {%- do run_query("drop view if exists " ~ relation) -%}
        {#- and out of dbt's relation cache, whose entry would keep the old hash for the rest of the
            build (data tests and typed_columns read it: input_versions) -#}
        {%- do adapter.cache_dropped(relation) -%}
    {%- endif -%}
    create view {{ relation }}
    {{ comment_clause() }}
    tblproperties ('cdc_lake.view_sql_hash' = '{{ sql_hash }}')
    as
    {{ sql }}
{%- endmacro %}

{% macro view_sql_hash(relation) %}
    {%- set existing = adapter.get_relation(relation.database, relation.schema, relation.identifier) -%}
    {%- if existing is none or not existing.is_view or not existing.information -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set found = modules.re.search('cdc_lake\\.view_sql_hash=([0-9a-f]{32})', existing.information) -%}
    {{ return(found.group(1) if found else none) }}
{% endmacro %}
