{% macro is_table_reset(ddl_type='ddl_type', source_position='source_position') %}
    {#- True for a DDL statement that removes every row of its table at its binlog position:
        TRUNCATE, and DROP TABLE (ERASE in Canal's vocabulary). MySQL writes such a statement to the
        binlog as one statement, with no row change for the rows it removes, so cdc_current and
        cdc_history end every row of the table that is live at that position themselves. Not the
        DDL a Debezium or dtle snapshot writes to describe a table (`DROP TABLE IF EXISTS` then
        `CREATE TABLE`, its source_position ending in `snapshot`): no statement ran. -#}
    ({{ ddl_type }} in ('TRUNCATE', 'ERASE') and coalesce({{ source_position }}, '') not rlike '(^| )snapshot$')
{%- endmacro %}


{% macro table_resets_landed(watermark) %}
    {#- Whether cdc_schema_changes holds a table reset (is_table_reset) landed after `watermark`
        (landing_watermarks): one `limit 1` query at execution time; false on a full or first build,
        which reads every reset anyway. A model uses it to read that batch of resets (the filter is
        `false` otherwise, so Spark prunes the whole branch) and to keep a batch that has resets but
        no new changes from being skipped as empty. -#}
    {%- if not execute or not is_incremental() or is_first_build(watermark) -%}
        {{ return(false) }}
    {%- endif -%}
    {%- set probe = run_query(
        'select 1 from ' ~ ref('cdc_schema_changes') ~ ' where ' ~ is_table_reset()
        ~ ' and ' ~ landed_after(watermark) ~ ' limit 1') -%}
    {{ return(probe | length > 0) }}
{% endmacro %}


{% macro table_resets() %}
    {#- The select of every table reset (is_table_reset) in cdc_schema_changes, one row each, with
        the reset before it in its table: a row change ordered between previous_reset_order and
        reset_order is ended by this reset. -#}
    select
        source_system,
        database_name,
        table_name,
        change_order as reset_order,
        commit_ts as reset_ts,
        schema_change_id as reset_id,
        source_format,
        landing_seq,
        lag(change_order) over (
            partition by source_system, database_name, table_name
            order by change_order, schema_change_id
        ) as previous_reset_order
    from {{ ref('cdc_schema_changes') }}
    where {{ is_table_reset() }}
{%- endmacro %}
