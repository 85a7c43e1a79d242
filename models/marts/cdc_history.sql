{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='version_id',
        merge_action_column='merge_action',
        tblproperties=cdc_merge_on_read(),
        partition_by=['is_current'],
    )
}}

-- SCD type 2: every version of every source row, with half-open validity [valid_from, valid_to).
-- Incremental, in two paths per key touched by newly landed changes:
-- * appended keys (the usual case: every new change is ordered after all the key's built ones):
--   the key's open version is read from this table and the new changes are played after it.
--   The change log's history is read only in four narrow columns, to tell the two paths apart.
-- * late keys (a new change is ordered before a built one): the key's whole history is rebuilt
--   from the change log, so a late change re-slices exactly that key, and versions the rebuild
--   no longer produces are removed.
-- A keyless table's rows are identified by their image; a version of such a row holds how many
-- identical rows exist (row_count), and every change of that number closes it and opens the next.
-- Both give what a full rebuild gives. Keys not touched are not read. Partitioned by is_current:
-- the open versions every run reads sit apart from the closed ones, which grow with history.

{%- set keys = cdc_row_key_columns() %}
{%- set key_columns = keys | join(', ') %}
{%- set watermark = landing_watermarks('last_landing_seq') %}
{#- a usual batch touches few keys: broadcast them rather than shuffle the change log and this table -#}
{%- set broadcast_keys = batch_is_small(ref('cdc_changelog'), watermark) %}

with new_changes as (

    select *
    from {{ ref('cdc_changelog') }}
    where {{ landed_since_last_build(ref('cdc_changelog'), watermark) }}

),

touched_keys as (

    select
        {{ key_columns }},
        min(change_order) as first_new_order,
        max(landing_seq) as batch_landing_seq
    from new_changes
    group by {{ key_columns }}

),

{% if is_incremental() %}

    built_keys as (

        -- what earlier builds saw of each touched key (narrow columns of the change log)
        select
            {{ key_columns }},
            max(change_order) as last_built_order,
            max(commit_ts) as last_built_ts
        from {{ ref('cdc_changelog') }} as changes
        left semi join touched_keys
            on {{ join_on_keys('changes', 'touched_keys', keys) }}
        where not {{ landed_after(watermark, 'changes.landing_seq', 'changes.source_format') }}
        group by {{ key_columns }}

    ),

    touched_with_past as (

        select
            touched_keys.*,
            built_keys.last_built_order,
            built_keys.last_built_ts,
            coalesce(built_keys.last_built_order >= touched_keys.first_new_order, false) as is_late
        from touched_keys
        left join built_keys
            on {{ join_on_keys('touched_keys', 'built_keys', keys) }}

    ),

    late_keys as (

        select * from touched_with_past
        where is_late

    ),

    appended_keys as (

        select * from touched_with_past
        where not is_late

    ),

    open_versions as (

        -- the version each appended key is in now; the new changes are played after it
        select {% if broadcast_keys %}/*+ broadcast(appended_keys) */{% endif %}
            {{ canonical_columns('history_changes', relation='existing', values={
                'is_keyless': 'coalesce(existing.is_keyless, false)',
                'row_delta': 'coalesce(existing.row_count, 1)',
                'change_id': 'existing.version_id',
                'commit_ts': 'existing.valid_from',
                'batch_landing_seq': 'appended_keys.batch_landing_seq',
                'floor_ts': none,
                'is_open_version': 'true',
            }) | indent(12) }}
        from {{ this }} as existing
        inner join appended_keys
            on {{ join_on_keys('existing', 'appended_keys', keys) }}
        where existing.is_current

    ),

    appended_changes as (

        -- the running commit time (floor_ts) carries on from the built changes
        select
            {{ canonical_columns('history_changes', relation='new_changes', values={
                'image': history_image('new_changes'),
                'row_delta': keyless_row_delta('new_changes'),
                'batch_landing_seq': 'appended_keys.batch_landing_seq',
                'floor_ts': 'appended_keys.last_built_ts',
                'is_open_version': 'false',
            }) | indent(12) }}
        from new_changes
        inner join appended_keys
            on {{ join_on_keys('new_changes', 'appended_keys', keys) }}

    ),

{% else %}

    late_keys as (

        -- a full build: every key is rebuilt from the change log
        select * from touched_keys

    ),

{% endif %}

replayed_changes as (

    select {% if broadcast_keys %}/*+ broadcast(late_keys) */{% endif %}
        {{ canonical_columns('history_changes', relation='changes', values={
            'image': history_image('changes'),
            'row_delta': keyless_row_delta('changes'),
            'batch_landing_seq': 'late_keys.batch_landing_seq',
            'floor_ts': none,
            'is_open_version': 'false',
        }) | indent(8) }}
    from {{ ref('cdc_changelog') }} as changes
    inner join late_keys
        on {{ join_on_keys('changes', 'late_keys', keys) }}

),

key_changes as (

    -- the three branches are written with canonical_columns: the same columns in the same order
    select * from replayed_changes
    {% if is_incremental() %}
        union all
        select * from open_versions
        union all
        select * from appended_changes
    {% endif %}

),

counted as (

    -- how many rows the key stands for after each change: one or none for a keyed row, the
    -- running number of identical rows for a keyless one
    select
        *,
        case
            when is_keyless
                then sum(row_delta) over (
                    partition by {{ key_columns }}
                    order by change_order, change_id
                    rows between unbounded preceding and current row
                )
            when op = 'd' then 0
            else 1
        end as row_count
    from key_changes

),

sequenced as (

    select
        *,
        lag(row_count) over by_key as previous_row_count,
        lag(image) over by_key as previous_image,
        -- binlog event times can step back; validity never does. An open version keeps its start.
        case
            when is_open_version then commit_ts
            else greatest(
                max(commit_ts) over (
                    partition by {{ key_columns }}
                    order by change_order, change_id
                    rows between unbounded preceding and current row
                ),
                floor_ts
            )
        end as effective_ts
    from counted
    window by_key as (partition by {{ key_columns }} order by change_order, change_id)

),

significant as (

    -- changes that alter the row: not a delete of a row that is already gone, not an update to an
    -- identical image (unless the `cdc_keep_noop_updates` var says so)
    select *
    from sequenced
    where
        is_open_version
        or not (
            (row_count <= 0 and coalesce(previous_row_count, 0) <= 0)
            {%- if not var('cdc_keep_noop_updates', false) %}
                or (
                    (row_count > 0 and previous_row_count = row_count)
                    and {{ same_image('image', 'previous_image') }}
                )
            {%- endif %}
        )

),

versions as (

    select
        *,
        lead(effective_ts) over by_key as closed_ts,
        lead(row_count) over by_key as closing_row_count,
        lead(change_id) over by_key as closing_change_id
    from significant
    window by_key as (partition by {{ key_columns }} order by change_order, change_id)

),

final as (

    select
        {{ canonical_columns('cdc_history', values={
            'version_id': 'change_id',
            'valid_from': 'effective_ts',
            'valid_to': 'closed_ts',
            'is_current': 'closing_change_id is null',
            'closed_by_delete': 'coalesce(closing_row_count <= 0, false)',
            'last_landing_seq': 'batch_landing_seq',
        }, relation='versions') | indent(8) }}
    from versions
    where row_count > 0

)

{% if is_incremental() %}

    select
        {{ canonical_columns('cdc_history', relation='final', merge_action="'upsert'") | indent(8) }}
    from final

    union all

    -- versions of late keys that the rebuild no longer produces. The MERGE deletes them by
    -- version_id and reads nothing else of them, so only ids and keys are scanned: the images of
    -- the whole table are not read.
    select
        {{ canonical_columns('cdc_history', relation='existing', only=['version_id'] + keys,
                             merge_action="'delete'") | indent(8) }}
    from {{ this }} as existing
    left semi join late_keys
        on {{ join_on_keys('existing', 'late_keys', keys) }}
    left anti join final
        on existing.version_id = final.version_id

{% else %}

    select * from final

{% endif %}
