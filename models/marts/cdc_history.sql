{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='version_id',
        merge_action_column='merge_action',
        tblproperties=cdc_merge_on_read(),
        partition_by=['is_latest'],
    )
}}

{%- set keys = cdc_row_key_columns() %}
{#- the per-table options (var cdc_table_options), validated as the project parses #}
{%- set table_options = cdc_table_options() %}
{%- set key_columns = keys | join(', ') %}
{#- the order of a key's changes: by source position, the change id breaking ties -#}
{%- set in_key_order = 'partition by ' ~ key_columns ~ ' order by change_order, change_id' %}
{%- set watermark = landing_watermarks('last_landing_seq') %}
{%- set resets_landed = table_resets_landed(watermark) %}
{%- set snapshots_landed = snapshots_completed(watermark) %}
{%- set batch_filter = landed_since_last_build(ref('cdc_changelog'), watermark,
                                               other_rows_landed=resets_landed or snapshots_landed) %}
{#- a usual batch touches few keys: broadcast them rather than shuffle the change log and this table -#}
{%- set broadcast_keys = batch_is_small(ref('cdc_changelog'), watermark) %}
{%- set classify_keys = history_key_classes('touched_keys', 'table_resets', 'snapshots', watermark, resets_landed,
                                            snapshots_landed, broadcast_keys) %}
{#- a change-log row (alias `changes`) as a history change of a key of the batch (alias `batch_keys`) -#}
{%- set played_change = {'image': history_image('changes'), 'row_delta': keyless_row_delta('changes'),
    'batch_landing_seq': 'batch_keys.batch_landing_seq', 'is_open_version': 'false',
    'snapshot_order': snapshot_order('changes.source_position', 'changes.change_order')} %}

with new_changes as (

    select *
    from {{ ref('cdc_changelog') }}
    where {{ batch_filter }}
    {#- the batch this build writes, for the data tests of a scheduled build (tested_batch) #}
    {{- tested_batch_note(watermark, 'last_landing_seq') }}

),

table_resets as (

    -- each TRUNCATE / DROP TABLE, with the reset before it in its table
    {{ table_resets() }}

),

snapshots as (

    -- each complete snapshot that closes the keys it did not read, with the one before it in its table
    {{ rebaselining_snapshots() }}

),

touched_keys as (

    select
        {{ key_columns }},
        min(change_order) as first_new_order,
        max(landing_seq) as batch_landing_seq
    from new_changes
    group by {{ key_columns }}

),

key_classes as (

    -- how each key is played: appended after its latest version, or late and replayed whole
    {{ classify_keys | indent(4) }}

),

late_keys as (

    select * from key_classes
    where is_late

),

{% if is_incremental() %}

    appended_keys as (

        select * from key_classes
        where not is_late

    ),

    latest_versions as (

        -- each appended key's latest version, copied for the delete (or the snapshot that did not
        -- read it) that closed it if one did (a closing reset is played again): one read, where a
        -- union read the partition twice
        {%- set version = {
            'is_keyless': 'coalesce(existing.is_keyless, false)', 'row_delta': 'existing.row_count',
            'change_id': 'existing.version_id', 'commit_ts': 'existing.valid_from',
            'batch_landing_seq': 'appended_keys.batch_landing_seq', 'floor_ts': none, 'is_open_version': 'true',
            'unavailable_columns': 'coalesce(existing.unknown_columns, array())', 'snapshot_order': none,
        } %}
        {%- set closing_delete = {
            'op': 'existing.closing_op', 'image': 'existing.closing_image', 'row_delta': '-existing.row_count',
            'change_order': 'existing.closing_change_order', 'change_id': 'existing.closing_change_id',
            'commit_ts': 'existing.valid_to',
        } %}
        {%- set version_or_delete = copied_row_values('copies.is_closing_delete', closing_delete, version,
                                                      'existing') %}
        select {% if broadcast_keys %}/*+ broadcast(appended_keys) */{% endif %}
            {{ canonical_columns('history_changes', relation='existing', values=version_or_delete) | indent(12) }}
        from {{ this }} as existing
        inner join appended_keys
            on {{ join_on_keys('existing', 'appended_keys', keys) }}
            lateral view explode(
                if(existing.closing_op in ('d', 'a'), array(false, true), array(false))
            ) copies as is_closing_delete
        where existing.is_latest

    ),

    appended_changes as (

        -- the running commit time (floor_ts) carries on from the key's built changes
        select
            {{ canonical_columns('history_changes', relation='changes',
                                 values=dict(played_change, floor_ts='batch_keys.last_built_ts')) | indent(12) }}
        from new_changes as changes
        inner join appended_keys as batch_keys
            on {{ join_on_keys('changes', 'batch_keys', keys) }}

    ),

    built_versions as (

        -- the ids of the built versions of late keys: those the replay no longer produces are deleted
        select {% if broadcast_keys %}/*+ broadcast(late_keys) */{% endif %}
            {{ qualified_columns('existing', ['version_id'] + keys) }}
        from {{ this }} as existing
        left semi join late_keys
            on {{ join_on_keys('existing', 'late_keys', keys) }}

    ),

{% endif %}

replayed_changes as (

    -- from the key's first change: no running commit time to carry on from
    select {% if broadcast_keys %}/*+ broadcast(batch_keys) */{% endif %}
        {{ canonical_columns('history_changes', relation='changes',
                             values=dict(played_change, floor_ts=none)) | indent(8) }}
    from {{ ref('cdc_changelog') }} as changes
    inner join late_keys as batch_keys
        on {{ join_on_keys('changes', 'batch_keys', keys) }}

),

replayed_with_snapshots as (

    -- the complete snapshots that did not read a key close it (op a); an appended key's new
    -- changes all follow its table's last complete snapshot (history_key_classes)
    {{ play_snapshot_closes('replayed_changes', 'snapshots') | indent(4) }}

),

row_changes as (

    select * from replayed_with_snapshots
    {% if is_incremental() %}
        union all
        select * from latest_versions
        union all
        select * from appended_changes
    {% endif %}

),

key_changes as (

    -- every change, and each table reset that follows a change of the key
    {{ play_table_resets('row_changes', 'table_resets') | indent(4) }}

),

resolved as (

    -- unavailable values taken from the key's previous changes (unknown_columns where none)
    {{ resolve_unavailable_values('key_changes') | indent(4) }}

),

running_totals as (

    -- a keyless row's running sum of inserts less deletes (a reset or a snapshot's close adds nothing)
    select
        *,
        sum(row_delta) over so_far as running_delta
    from resolved
    window so_far as ({{ in_key_order }} rows between unbounded preceding and current row)

),

counted as (

    -- how many rows the key stands for after each change: one or none for a keyed row; for a
    -- keyless one the running sum since the table's last reset or complete snapshot (the same
    -- window as above, so Spark sorts the changes once)
    select
        *,
        case
            when is_keyless
                then
                    running_delta
                    - coalesce(last_value(if(op in ('t', 'a'), running_delta, null), true) over so_far, 0)
            when op in ('d', 't', 'a') then 0
            else 1
        end as row_count
    from running_totals
    window so_far as ({{ in_key_order }} rows between unbounded preceding and current row)

),

sequenced as (

    select
        *,
        lag(row_count) over by_key as previous_row_count,
        lag(image) over by_key as previous_image,
        -- binlog event times can step back; validity never does. An open version keeps its start.
        case
            when is_open_version then commit_ts
            else greatest(max(commit_ts) over so_far, floor_ts)
        end as effective_ts
    from counted
    window
        by_key as ({{ in_key_order }}),
        so_far as ({{ in_key_order }} rows between unbounded preceding and current row)

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
{%- if table_options.tracks_history %}

runs as (

    -- a table with track_history / track_history_except: a change that alters only untracked
    -- columns is absorbed into the version open before it; each other change starts a run
    select
        *,
        count_if(not is_absorbed) over so_far as run_number
    from (
        select
            *,
            not is_open_version
            and not coalesce(is_keyless, false)
            and row_count > 0
            and previous_row_count = row_count
            and {{ history_same_tracked_image(table_options, 'image', 'previous_image') | indent(12) }}
                as is_absorbed
        from significant
    ) as classified
    window so_far as ({{ in_key_order }} rows between unbounded preceding and current row)

),

collapsed as (

    -- the version a run keeps holds the image of its last change (valid_from, op and change_id
    -- stay its first change's)
    select
        *,
        last_value(image) over whole_run as run_image,
        last_value(unknown_columns) over whole_run as run_unknown_columns
    from runs
    window whole_run as (
        partition by {{ key_columns }}, run_number order by change_order, change_id
        rows between unbounded preceding and unbounded following
    )

),
{%- endif %}

versions as (

    select
        *,
        lead(effective_ts) over by_key as closed_ts,
        lead(row_count) over by_key as closing_row_count,
        lead(change_id) over by_key as closing_change_id,
        lead(op) over by_key as closing_op,
        lead(change_order) over by_key as closing_change_order,
        -- a keyed row's delete says what the row held when it went: cdc_current shows that image
        if(lead(op) over by_key = 'd' and not coalesce(is_keyless, false), lead(image) over by_key, null)
            as closing_image,
        -- no later state holds the row: the key's latest version (cdc_current's row)
        coalesce(max(row_count) over later, 0) <= 0 as is_latest
    {#- a change that updated its version in place is no version of its own #}
    from {{ 'collapsed' if table_options.tracks_history else 'significant' }}
    where {{ 'not is_absorbed' if table_options.tracks_history else 'true' }}
    window
        by_key as ({{ in_key_order }}),
        later as ({{ in_key_order }} rows between 1 following and unbounded following)

),

final as (

    {#- an open version's valid_to: null, or the valid_to_current option of its table #}
    {%- set version_values = {
        'version_id': 'change_id',
        'valid_from': 'effective_ts',
        'valid_to': 'closed_ts',
        'is_current': 'closing_change_id is null',
        'closed_by_delete': 'coalesce(closing_row_count <= 0, false)',
        'last_landing_seq': 'batch_landing_seq',
    } %}
    {%- if table_options.tracks_history %}
        {%- do version_values.update({'image': 'run_image', 'unknown_columns': 'run_unknown_columns'}) %}
    {%- endif %}
    {%- if table_options.sets_valid_to_current %}
        {%- do version_values.update({'valid_to': 'coalesce(closed_ts, '
                                      ~ history_valid_to_current(table_options) ~ ')'}) %}
    {%- endif %}
    select
        {{ canonical_columns('cdc_history', values=version_values, relation='versions') | indent(8) }}
    from versions
    where row_count > 0

)

{% if is_incremental() %}

    -- the batch's versions, and a delete (by version_id) for each built version of a late key the
    -- replay no longer produces: one outer join, as a second use of `final` would compute it twice
    {%- set identity = {} %}
    {%- for column in ['version_id'] + keys %}
        {%- do identity.update({column: 'coalesce(final.' ~ column ~ ', built_versions.' ~ column ~ ')'}) %}
    {%- endfor %}
    select
        {{ canonical_columns('cdc_history', relation='final', values=identity,
                             merge_action="if(final.version_id is null, 'delete', 'upsert')") | indent(8) }}
    from final
    full outer join built_versions
        on final.version_id = built_versions.version_id

{% else %}

    select * from final

{% endif %}
