{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key=['source_system', 'database_name', 'table_name', 'row_key'],
        merge_delete_flag='is_removed',
        tblproperties=cdc_merge_on_read(),
    )
}}

-- The latest image of every source row. Incremental: reads only change-log rows landed since the
-- last build and, of this table, only the rows of the keys they touch. The newest change by
-- change_order wins, so a late change older than the stored one does not overwrite it. Deletes
-- stay as rows with is_deleted = true, for ever unless the `cdc_delete_retention_days` var is set:
-- then delete markers older than that are dropped (and a later change to such a row starts afresh).
-- A keyless table's rows are identified by their image, and identical rows are one row here whose
-- row_count is their number: inserts add one, deletes take one away, whatever their order.

{%- set retention_days = var('cdc_delete_retention_days', none) %}

with new_changes as (

    select *
    from {{ ref('cdc_changelog') }}
    -- with a retention period, expiring delete markers make a batch without new changes
    where {{ landed_since_last_build(ref('cdc_changelog'), landing_watermarks('last_landing_seq'),
                                     mark_batch=retention_days is none) }}

),

new_latest as (

    select
        *,
        max(landing_seq) over (
            partition by source_system, database_name, table_name, row_key
        ) as batch_landing_seq,
        -- what the batch adds to the number of identical keyless rows
        sum({{ keyless_row_delta('new_changes') }}) over (
            partition by source_system, database_name, table_name, row_key
        ) as batch_row_count,
        row_number() over (
            partition by source_system, database_name, table_name, row_key
            order by change_order desc, change_id desc
        ) as recency
    from new_changes

),

candidates as (

    select
        source_format,
        source_system,
        database_name,
        table_name,
        row_key,
        primary_key,
        case when op = 'd' then before else after end as image,
        op = 'd' as is_deleted,
        op,
        commit_ts,
        change_order,
        change_id,
        column_types,
        is_keyless,
        batch_row_count as row_count,
        batch_landing_seq as last_landing_seq
    from new_latest
    where recency = 1

    {% if is_incremental() %}
        union all

        select
            existing.source_format,
            existing.source_system,
            existing.database_name,
            existing.table_name,
            existing.row_key,
            existing.primary_key,
            existing.image,
            existing.is_deleted,
            existing.op,
            existing.commit_ts,
            existing.change_order,
            existing.change_id,
            existing.column_types,
            coalesce(existing.is_keyless, false) as is_keyless,
            coalesce(existing.row_count, if(existing.is_deleted, 0, 1)) as row_count,
            existing.last_landing_seq
        from {{ this }} as existing
        left semi join new_latest
            on
                existing.source_system = new_latest.source_system
                and existing.database_name = new_latest.database_name
                and existing.table_name = new_latest.table_name
                and existing.row_key = new_latest.row_key
    {% endif %}

),

ranked as (

    select
        *,
        max(last_landing_seq) over (
            partition by source_system, database_name, table_name, row_key
        ) as newest_landing_seq,
        sum(row_count) over (
            partition by source_system, database_name, table_name, row_key
        ) as net_row_count,
        row_number() over (
            partition by source_system, database_name, table_name, row_key
            order by change_order desc, change_id desc
        ) as recency
    from candidates

),

final as (

    select
        source_format,
        source_system,
        database_name,
        table_name,
        row_key,
        primary_key,
        image,
        if(is_keyless, net_row_count <= 0, is_deleted) as is_deleted,
        op,
        commit_ts,
        change_order,
        change_id,
        column_types,
        is_keyless,
        case when not is_keyless then if(is_deleted, 0, 1) else net_row_count end as row_count,
        newest_landing_seq as last_landing_seq
    from ranked
    where recency = 1

)

{% if retention_days is none and not is_incremental() %}

    select * from final

{% elif not is_incremental() %}

    select * from final
    where not (is_deleted and {{ delete_marker_expired('commit_ts', retention_days) }})

{% else %}

    select
        *,
        {% if retention_days is none -%}
            false
        {%- else -%}
            is_deleted and {{ delete_marker_expired('commit_ts', retention_days) }}
        {%- endif %} as is_removed
    from final

    {% if retention_days is not none %}
        union all

        -- delete markers that expired since the last build
        select
            *,
            true as is_removed
        from {{ this }}
        where is_deleted and {{ delete_marker_expired('commit_ts', retention_days) }}
    {% endif %}

{% endif %}
