{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key=cdc_row_key_columns(),
        merge_action_column='merge_action',
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

{%- set keys = cdc_row_key_columns() %}
{%- set key_columns = keys | join(', ') %}
{%- set retention_days = var('cdc_delete_retention_days', none) %}
{#- a delete marker older than the retention period (never, without one) -#}
{%- set expired = 'false' if retention_days is none
    else 'is_deleted and ' ~ delete_marker_expired('commit_ts', retention_days) %}

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
        max(landing_seq) over (partition by {{ key_columns }}) as batch_landing_seq,
        -- what the batch adds to the number of identical keyless rows
        sum({{ keyless_row_delta('new_changes') }}) over (partition by {{ key_columns }}) as batch_row_count,
        row_number() over (
            partition by {{ key_columns }}
            order by change_order desc, change_id desc
        ) as recency
    from new_changes

),

candidates as (

    -- both branches are written with canonical_columns: cdc_current's columns, in its order
    select
        {{ canonical_columns('cdc_current', relation='new_latest', values={
            'image': "case when op = 'd' then before else after end",
            'is_deleted': "op = 'd'",
            'row_count': 'batch_row_count',
            'last_landing_seq': 'batch_landing_seq',
        }) | indent(8) }}
    from new_latest
    where recency = 1

    {% if is_incremental() %}
        union all

        select
            {{ canonical_columns('cdc_current', relation='existing', values={
                'is_keyless': 'coalesce(existing.is_keyless, false)',
                'row_count': 'coalesce(existing.row_count, if(existing.is_deleted, 0, 1))',
            }) | indent(12) }}
        from {{ this }} as existing
        left semi join new_latest
            on {{ join_on_keys('existing', 'new_latest', keys) }}
    {% endif %}

),

ranked as (

    select
        *,
        max(last_landing_seq) over (partition by {{ key_columns }}) as newest_landing_seq,
        sum(row_count) over (partition by {{ key_columns }}) as net_row_count,
        row_number() over (
            partition by {{ key_columns }}
            order by change_order desc, change_id desc
        ) as recency
    from candidates

),

final as (

    select
        {{ canonical_columns('cdc_current', relation='ranked', values={
            'is_deleted': 'if(is_keyless, net_row_count <= 0, is_deleted)',
            'row_count': 'case when not is_keyless then if(is_deleted, 0, 1) else net_row_count end',
            'last_landing_seq': 'newest_landing_seq',
        }) | indent(8) }}
    from ranked
    where recency = 1

)

{% if not is_incremental() %}

    select * from final
    where not ({{ expired }})

{% else %}

    select
        {{ canonical_columns('cdc_current', relation='final',
                             merge_action="case when " ~ expired ~ " then 'delete' else 'upsert' end") | indent(8) }}
    from final

    {% if retention_days is not none %}
        union all

        -- delete markers that expired since the last build
        select
            {{ canonical_columns('cdc_current', relation='existing', merge_action="'delete'") | indent(12) }}
        from {{ this }} as existing
        where {{ expired }}
    {% endif %}

{% endif %}
