{{ config(materialized='view') }}

{%- set retention_days = var('cdc_delete_retention_days', none) %}

with states as (

    select
        source_format,
        source_system,
        database_name,
        table_name,
        row_key,
        primary_key,
        coalesce(closing_image, image) as image,
        unknown_columns,
        not is_current as is_deleted,
        coalesce(closing_op, op) as op,
        if(is_current, valid_from, valid_to) as commit_ts,
        coalesce(closing_change_order, change_order) as change_order,
        coalesce(closing_change_id, change_id) as change_id,
        is_keyless,
        if(is_current, row_count, 0) as row_count,
        last_landing_seq
    from {{ ref('cdc_history') }}
    where is_latest

)

select * from states
{%- if retention_days is not none %}
    where not (is_deleted and {{ delete_marker_expired('commit_ts', retention_days) }})
{%- endif %}
