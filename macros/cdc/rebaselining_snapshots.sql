{% macro rebaselining_snapshots() %}
    select
        source_system,
        database_name,
        table_name,
        snapshot_order,
        snapshot_ts,
        snapshot_id,
        source_format,
        last_read_order,
        completed_landing_seq,
        lag(snapshot_order) over (
            partition by source_system, database_name, table_name
            order by snapshot_order, snapshot_id
        ) as previous_snapshot_order
    from {{ ref('cdc_snapshots') }}
    where rebaselines
{%- endmacro %}

{% macro snapshots_completed(watermark) %}
    {%- if not execute or not is_incremental() or is_first_build(watermark) -%}
        {{ return(false) }}
    {%- endif -%}
    {%- set probe = run_query(
        'select 1 from ' ~ ref('cdc_snapshots') ~ ' where rebaselines and '
        ~ landed_after(watermark, 'completed_landing_seq') ~ ' limit 1') -%}
    {{ return(probe | length > 0) }}
{% endmacro %}
