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
-- A TRUNCATE or DROP TABLE (is_table_reset) sends no row changes: a row whose newest change is
-- older than its table's last reset is deleted by the first reset after that change (op `t`), and
-- a keyless row counts only the changes after the last reset. A batch that lands a reset
-- recomputes that table from the change log, and a key with a new change ordered before its
-- table's last reset is recomputed too.

{%- set keys = cdc_row_key_columns() %}
{%- set key_columns = keys | join(', ') %}
{%- set retention_days = var('cdc_delete_retention_days', none) %}
{%- set watermark = landing_watermarks('last_landing_seq') %}
{%- set resets_landed = table_resets_landed(watermark) %}
{#- keys the batch alone cannot bring forward (see recomputed_keys); rare, so found by a probe first -#}
{%- set recompute = resets_landed or changes_before_last_reset_landed(watermark) %}
{#- the batch this build writes, for the data tests of a scheduled build (tested_batch) -#}
{%- do record_tested_batch(watermark, 'last_landing_seq') %}
{#- a delete marker older than the retention period (never, without one) -#}
{%- set expired = 'false' if retention_days is none
    else 'is_deleted and ' ~ delete_marker_expired('commit_ts', retention_days) %}

with table_resets as (

    -- each TRUNCATE / DROP TABLE with the reset before it in its table: a row whose newest change
    -- falls between the two was deleted by this one
    {{ table_resets() }}

),

last_resets as (

    -- the last reset of each table: a row whose newest change is older is gone
    select
        source_system,
        database_name,
        table_name,
        max(reset_order) as reset_order
    from table_resets
    group by source_system, database_name, table_name

),

batch_changes as (

    select *
    from {{ ref('cdc_changelog') }}
    -- with a retention period, expiring delete markers make a batch without new changes
    where {{ landed_since_last_build(ref('cdc_changelog'), watermark, mark_batch=retention_days is none,
                                     other_rows_landed=resets_landed) }}

),

{% if is_incremental() and recompute %}

    new_resets as (

        select distinct
            source_system,
            database_name,
            table_name
        from table_resets
        where {{ landed_after(watermark) if resets_landed else 'false' }}

    ),

    recomputed_keys as (

        -- keys whose stored row the batch alone cannot bring forward, so they are read whole from
        -- the change log: every key of a table reset in this batch, and a key with a new change
        -- ordered before its table's last reset (its stored row is that reset's delete marker,
        -- which does not say which change it followed)
        select {{ qualified_columns('changes', keys) }}
        from {{ ref('cdc_changelog') }} as changes
        left semi join new_resets
            on {{ join_on_keys('changes', 'new_resets', keys[:3]) }}

        union

        select /*+ broadcast(last_resets) */ {{ qualified_columns('batch_changes', keys) }}
        from batch_changes
        inner join last_resets
            on {{ join_on_keys('batch_changes', 'last_resets', keys[:3]) }}
        where batch_changes.change_order < last_resets.reset_order

    ),

{% endif %}

new_changes as (

    select * from batch_changes

    {% if is_incremental() and recompute %}
        union all

        -- the earlier changes of the recomputed keys
        select changes.*
        from {{ ref('cdc_changelog') }} as changes
        left semi join recomputed_keys
            on {{ join_on_keys('changes', 'recomputed_keys', keys) }}
        where not {{ landed_after(watermark, 'changes.landing_seq', 'changes.source_format') }}
    {% endif %}

),

new_latest as (

    select /*+ broadcast(last_resets) */
        new_changes.*,
        max(new_changes.landing_seq) over (partition by {{ qualified_columns('new_changes', keys) }})
            as batch_landing_seq,
        -- what the batch adds to the number of identical keyless rows since the table's last reset
        sum(
            if(
                last_resets.reset_order is null or new_changes.change_order > last_resets.reset_order,
                {{ keyless_row_delta('new_changes') }},
                0
            )
        ) over (partition by {{ qualified_columns('new_changes', keys) }}) as batch_row_count,
        row_number() over (
            partition by {{ qualified_columns('new_changes', keys) }}
            order by new_changes.change_order desc, new_changes.change_id desc
        ) as recency
    from new_changes
    left join last_resets
        on {{ join_on_keys('new_changes', 'last_resets', keys[:3]) }}

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
        {% if recompute %}
            -- a recomputed key is read from the change log alone
            left anti join recomputed_keys
                on {{ join_on_keys('existing', 'recomputed_keys', keys) }}
        {% endif %}
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

latest as (

    -- the newest candidate per key, and the first reset of its table after it, if any (a row
    -- already deleted by a reset keeps that one)
    select /*+ broadcast(resets) */
        ranked.*,
        resets.reset_order is not null as is_reset,
        resets.reset_order,
        resets.reset_id,
        resets.reset_ts,
        resets.landing_seq as reset_landing_seq
    from ranked
    left join table_resets as resets
        on
            {{ join_on_keys('ranked', 'resets', keys[:3]) }}
            and ranked.op != 't'
            and ranked.change_order < resets.reset_order
            and (resets.previous_reset_order is null or ranked.change_order >= resets.previous_reset_order)
    where ranked.recency = 1

),

final as (

    select
        {{ canonical_columns('cdc_current', relation='latest', values={
            'is_deleted': 'is_reset or if(is_keyless, net_row_count <= 0, is_deleted)',
            'op': "if(is_reset, 't', op)",
            'commit_ts': 'if(is_reset, reset_ts, commit_ts)',
            'change_order': 'if(is_reset, reset_order, change_order)',
            'change_id': 'if(is_reset, reset_id, change_id)',
            'row_count': 'case when is_reset then 0 when not is_keyless then if(is_deleted, 0, 1) else net_row_count end',
            'last_landing_seq': 'if(is_reset, greatest(newest_landing_seq, reset_landing_seq), newest_landing_seq)',
        }) | indent(8) }}
    from latest

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
