{% macro is_table_reset(ddl_type='ddl_type', source_position='source_position') %}
    ({{ ddl_type }} in ('TRUNCATE', 'ERASE') and coalesce({{ source_position }}, '') not rlike '(^| )snapshot$')
{%- endmacro %}

{% macro table_resets_landed(watermark) %}
    {%- if not execute or not is_incremental() or is_first_build(watermark) -%}
        {{ return(false) }}
    {%- endif -%}
    {%- set probe = run_query(
        'select 1 from ' ~ ref('cdc_schema_changes') ~ ' where ' ~ is_table_reset()
        ~ ' and ' ~ landed_after(watermark) ~ ' limit 1') -%}
    {{ return(probe | length > 0) }}
{% endmacro %}

{% macro table_resets() %}
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
