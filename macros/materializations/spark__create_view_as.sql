{% macro spark__create_view_as(relation, sql) -%}
    {#- dbt-spark's view DDL, preceded by dropping the view. Through Iceberg's SparkSessionCatalog,
        `create or replace view` on an existing view updates its schema but keeps the old SQL text,
        so a view whose columns changed fails with INCOMPATIBLE_VIEW_SCHEMA_CHANGE when read.
        Dropping first makes the replacement real (views bind late, so dependants are unaffected). -#}
    {%- if execute -%}
        {%- do run_query("drop view if exists " ~ relation) -%}
    {%- endif -%}
    {{ dbt.spark__create_view_as(relation, sql) }}
{%- endmacro %}
