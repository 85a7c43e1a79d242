{{ config(materialized='view') }}

-- The latest state of every source row: each key's latest version in cdc_history (the is_latest
-- partition), so the change semantics live in one model. A live row is its open version. A row
-- whose latest version a delete or a TRUNCATE / DROP TABLE closed stays, with is_deleted = true,
-- the closing change's op, time and order, and the image the delete sent (the version's own
-- image after a TRUNCATE / DROP TABLE, which sends none). A key whose changes never made
-- it live (a delete of a row inserted before capture began) has no version, so no row here.
-- With the `cdc_delete_retention_days` var, delete markers older than that are left out.

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
        coalesce(valid_to, valid_from) as commit_ts,
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
