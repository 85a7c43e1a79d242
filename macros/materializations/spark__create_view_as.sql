{% macro spark__create_view_as(relation, sql) -%}
    {#- The view DDL, preceded by dropping the view, and skipped when the view already holds this
        very SQL.
        - Through Iceberg's SparkSessionCatalog, `create or replace view` on an existing view
          updates its schema but keeps the old SQL text, so a view whose columns changed fails with
          INCOMPATIBLE_VIEW_SCHEMA_CHANGE when read. Dropping first makes the replacement real
          (views bind late, so dependants are unaffected).
        - A view is only its SQL: re-creating an unchanged one costs two metastore writes and an
          analysis of its query, for each of the project's ~20 views on every run. The view keeps
          the MD5 of its SQL as a table property (view_sql_hash), and dbt's relation cache already
          holds every relation's properties (dbt-spark describes each one when it fills the
          cache), so the check costs no query. `--full-refresh` always re-creates.
        The DDL is written here rather than taken from dbt-spark (which has no place for the
        property): it leaves out dbt-spark's column list for `persist_docs` columns and its
        contract check, neither of which this project uses. -#}
    {%- set sql_hash = local_md5(sql) -%}
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
    {#- The SQL hash an existing view of this name was created with (spark__create_view_as), from
        the properties in dbt's relation cache; none when there is no such view or no hash. -#}
    {%- set existing = adapter.get_relation(relation.database, relation.schema, relation.identifier) -%}
    {%- if existing is none or not existing.is_view or not existing.information -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set found = modules.re.search('cdc_lake\\.view_sql_hash=([0-9a-f]{32})', existing.information) -%}
    {{ return(found.group(1) if found else none) }}
{% endmacro %}
