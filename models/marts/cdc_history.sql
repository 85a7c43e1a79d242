{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='version_id',
        merge_delete_flag='is_removed',
    )
}}

-- SCD type 2: every version of every source row, with half-open validity [valid_from, valid_to).
-- Incremental: the full history of each key touched by newly landed changes is rebuilt from the
-- change log (so a late change re-slices exactly that key, and the result equals a full rebuild);
-- versions of those keys that no longer exist are removed. Keys not touched are not read.

{%- set keys = ['source_system', 'database_name', 'table_name', 'row_key'] %}

with new_changes as (

    select *
    from {{ ref('cdc_changelog') }}
    where landing_seq > {{ landing_watermark('last_landing_seq') }}

),

affected_keys as (

    select
        {{ keys | join(', ') }},
        max(landing_seq) as batch_landing_seq
    from new_changes
    group by {{ keys | join(', ') }}

),

key_changes as (

    select
        changes.*,
        affected_keys.batch_landing_seq
    from {{ ref('cdc_changelog') }} as changes
    inner join affected_keys
        on
            changes.source_system = affected_keys.source_system
            and changes.database_name = affected_keys.database_name
            and changes.table_name = affected_keys.table_name
            and changes.row_key = affected_keys.row_key

),

sequenced as (

    select
        *,
        lag(op) over by_key as previous_op,
        lag(after) over by_key as previous_after,
        -- binlog event times can step back; validity never does
        max(commit_ts) over (
            partition by {{ keys | join(', ') }}
            order by change_order, change_id
            rows between unbounded preceding and current row
        ) as effective_ts
    from key_changes
    window by_key as (partition by {{ keys | join(', ') }} order by change_order, change_id)

),

significant as (

    -- changes that alter the row: not an update to an identical image (unless the
    -- `cdc_keep_noop_updates` var says so), not a delete of a row that is already gone
    select *
    from sequenced
    where not (
        op = 'd' and (previous_op is null or previous_op = 'd')
        {%- if not var('cdc_keep_noop_updates', false) %}
            or op != 'd' and previous_op is not null and previous_op != 'd'
            and {{ same_image('after', 'previous_after') }}
        {%- endif %}
    )

),

versions as (

    select
        *,
        lead(effective_ts) over by_key as closed_ts,
        lead(op) over by_key as closing_op,
        lead(change_id) over by_key as closing_change_id
    from significant
    window by_key as (partition by {{ keys | join(', ') }} order by change_order, change_id)

),

final as (

    select
        change_id as version_id,
        source_format,
        {{ keys | join(',\n        ') }},
        primary_key,
        after as image,
        effective_ts as valid_from,
        closed_ts as valid_to,
        closing_op is null as is_current,
        op,
        change_id,
        change_order,
        coalesce(closing_op = 'd', false) as closed_by_delete,
        closing_change_id,
        batch_landing_seq as last_landing_seq
    from versions
    where op != 'd'

)

{% if is_incremental() %}

    select
        *,
        false as is_removed
    from final

    union all

    -- versions of touched keys that the rebuild no longer produces
    select
        existing.*,
        true as is_removed
    from {{ this }} as existing
    left semi join affected_keys
        on
            existing.source_system = affected_keys.source_system
            and existing.database_name = affected_keys.database_name
            and existing.table_name = affected_keys.table_name
            and existing.row_key = affected_keys.row_key
    left anti join final
        on existing.version_id = final.version_id

{% else %}

    select * from final

{% endif %}
