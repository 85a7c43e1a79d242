{% macro release_batch() %}
    {#- Post-hook of every model: an incremental model's batch view (`<model>__dbt_tmp`, cached by
        source_is_empty) is dropped once the model is written, which uncaches it. Spark's cache is
        shared by every session of the application (a Thrift Server's users too), so it is
        released right away. Dropping, not `uncache table`: uncaching resolves the view first, and
        a batch view left from an earlier build may name tables that no longer exist. -#}
    {%- if model.config.materialized == 'incremental' -%}
        drop view if exists {{ this.identifier }}__dbt_tmp
    {%- endif -%}
{% endmacro %}
