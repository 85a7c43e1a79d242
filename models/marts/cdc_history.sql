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

-- SCD type 2: every version of every source row, with half-open validity [valid_from, valid_to).
-- The one model of change semantics: cdc_current is each key's latest version read from here.
-- Incremental, per key touched by newly landed changes: an appended key (every new change ordered
-- after the key's built ones, the usual case) has its latest version, and the delete that closed
-- it if one did, read from this table and the new changes played after it; a late key (a new
-- change ordered before a built one) has its whole history rebuilt from the change log, and the
-- versions the rebuild no longer produces removed. The change log's history is read only in four
-- narrow columns, to tell the two apart. A keyless row is identified by its image; its version
-- holds how many identical rows exist (row_count), and every change of that number closes it.
-- A TRUNCATE or DROP TABLE (is_table_reset) sends no row changes: after each change of a key, the
-- table's next reset is played as one more change (op `t`) that ends the row if still live. A
-- batch that lands a reset rebuilds every key of the table changed before it, and a new change
-- ordered before its table's last reset makes its key late. Both give what a full rebuild gives.
-- Partitioned by is_latest: the versions each run and cdc_current read sit apart from the rest.

{%- set keys = cdc_row_key_columns() %}
{%- set key_columns = keys | join(', ') %}
{#- the order of a key's changes: by source position, the change id breaking ties -#}
{%- set in_key_order = 'partition by ' ~ key_columns ~ ' order by change_order, change_id' %}
{%- set watermark = landing_watermarks('last_landing_seq') %}
{%- set resets_landed = table_resets_landed(watermark) %}
{%- set batch_filter = landed_since_last_build(ref('cdc_changelog'), watermark, other_rows_landed=resets_landed) %}
{#- the batch this build writes, for the data tests of a scheduled build (tested_batch) -#}
{%- do record_tested_batch(watermark, batch_filter, 'last_landing_seq') %}
{#- a usual batch touches few keys: broadcast them rather than shuffle the change log and this table -#}
{%- set broadcast_keys = batch_is_small(ref('cdc_changelog'), watermark) %}

with new_changes as (

    select *
    from {{ ref('cdc_changelog') }}
    where {{ batch_filter }}

),

table_resets as (

    -- each TRUNCATE / DROP TABLE with the reset before it in its table: a change ordered between
    -- the two is followed by this reset
    {{ table_resets() }}

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

    reset_keys as (

        -- keys of a table reset in this batch that changed before the reset: rebuilt as late keys
        select
            {{ qualified_columns('changes', keys) }},
            max(resets.landing_seq) as batch_landing_seq
        from {{ ref('cdc_changelog') }} as changes
        inner join table_resets as resets
            on
                {{ join_on_keys('changes', 'resets', keys[:3]) }}
                and changes.change_order < resets.reset_order
        where {{ landed_after(watermark, 'resets.landing_seq', 'resets.source_format') if resets_landed else 'false' }}
        group by {{ qualified_columns('changes', keys) }}

    ),

    built_keys as (

        -- what earlier builds saw of each touched key (narrow columns of the change log); a
        -- small batch's keys are broadcast, so the scan is cut map-side instead of shuffled whole
        select {% if broadcast_keys %}/*+ broadcast(touched_keys) */{% endif %}
            {{ key_columns }},
            max(change_order) as last_built_order,
            max(commit_ts) as last_built_ts
        from {{ ref('cdc_changelog') }} as changes
        left semi join touched_keys
            on {{ join_on_keys('changes', 'touched_keys', keys) }}
        where not {{ landed_after(watermark, 'changes.landing_seq', 'changes.source_format') }}
        group by {{ key_columns }}

    ),

    last_resets as (

        select source_system, database_name, table_name, max(reset_order) as last_reset_order
        from table_resets
        group by source_system, database_name, table_name

    ),

    touched_with_past as (

        -- late: a new change ordered before a built change, or before its table's last reset (the
        -- reset closed versions the change must come before), or its table reset in this batch
        select /*+ broadcast(last_resets) */
            {{ qualified_columns('touched_keys', keys) }},
            touched_keys.first_new_order,
            greatest(touched_keys.batch_landing_seq, reset_keys.batch_landing_seq) as batch_landing_seq,
            built_keys.last_built_order,
            built_keys.last_built_ts,
            coalesce(built_keys.last_built_order >= touched_keys.first_new_order, false)
            or coalesce(last_resets.last_reset_order > touched_keys.first_new_order, false)
            or reset_keys.row_key is not null as is_late
        from touched_keys
        left join built_keys
            on {{ join_on_keys('touched_keys', 'built_keys', keys) }}
        left join reset_keys
            on {{ join_on_keys('touched_keys', 'reset_keys', keys) }}
        left join last_resets
            on {{ join_on_keys('touched_keys', 'last_resets', keys[:3]) }}

    ),

    late_keys as (

        select {{ key_columns }}, batch_landing_seq from touched_with_past
        where is_late

        union all

        select {{ qualified_columns('reset_keys', keys) }}, reset_keys.batch_landing_seq
        from reset_keys
        left anti join touched_keys
            on {{ join_on_keys('reset_keys', 'touched_keys', keys) }}

    ),

    appended_keys as (

        select * from touched_with_past
        where not is_late

    ),

    latest_versions as (

        -- the version each appended key is in now, and the delete that closed it, if one did (a
        -- reset that closed it is played again by key_changes); the new changes follow them. One
        -- read of the latest versions, each copied for its closing delete: a union of two selects
        -- read the partition, images and all, twice
        {%- set version = {
            'is_keyless': 'coalesce(existing.is_keyless, false)', 'row_delta': 'existing.row_count',
            'change_id': 'existing.version_id', 'commit_ts': 'existing.valid_from',
            'batch_landing_seq': 'appended_keys.batch_landing_seq', 'floor_ts': none, 'is_open_version': 'true',
            'unavailable_columns': 'coalesce(existing.unknown_columns, array())',
        } %}
        {%- set closing_delete = {
            'op': 'existing.closing_op', 'image': 'existing.closing_image', 'row_delta': '-existing.row_count',
            'change_order': 'existing.closing_change_order', 'change_id': 'existing.closing_change_id',
            'commit_ts': 'existing.valid_to',
        } %}
        {%- set version_or_delete = copied_row_values('copies.is_closing_delete', closing_delete, version, 'existing') %}
        select {% if broadcast_keys %}/*+ broadcast(appended_keys) */{% endif %}
            {{ canonical_columns('history_changes', relation='existing', values=version_or_delete) | indent(12) }}
        from {{ this }} as existing
        inner join appended_keys
            on {{ join_on_keys('existing', 'appended_keys', keys) }}
            lateral view explode(
                if(existing.closing_op = 'd', array(false, true), array(false))
            ) copies as is_closing_delete
        where existing.is_latest

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

    built_versions as (

        -- the ids of the built versions of late keys: those the rebuild no longer produces are deleted
        select {% if broadcast_keys %}/*+ broadcast(late_keys) */{% endif %}
            {{ qualified_columns('existing', ['version_id'] + keys) }}
        from {{ this }} as existing
        left semi join late_keys
            on {{ join_on_keys('existing', 'late_keys', keys) }}

    ),

{% else %}

    -- a full build: every key is rebuilt from the change log
    late_keys as (select * from touched_keys),

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

row_changes as (

    select * from replayed_changes
    {% if is_incremental() %}
        union all
        select * from latest_versions
        union all
        select * from appended_changes
    {% endif %}

),

changes_before_resets as (

    -- each change with the first reset of its table after it, if any (the reset that ends the row
    -- if it is still live then), and what that reset's row in key_changes carries: over the key's
    -- changes before the reset, the least format, whether any is keyless, the latest batch and
    -- running commit time; the key's last change before the reset brings it in (precedes_reset)
    select /*+ broadcast(resets) */
        row_changes.*,
        resets.reset_order,
        resets.reset_id,
        resets.reset_ts,
        min(row_changes.source_format) over before_reset as reset_source_format,
        bool_or(row_changes.is_keyless) over before_reset as reset_is_keyless,
        max(row_changes.batch_landing_seq) over before_reset as reset_batch_landing_seq,
        max(row_changes.floor_ts) over before_reset as reset_floor_ts,
        resets.reset_order is not null
        and row_number() over (
            partition by {{ qualified_columns('row_changes', keys) }}, resets.reset_order
            order by row_changes.change_order desc, row_changes.change_id desc
        ) = 1 as precedes_reset
    from row_changes
    left join table_resets as resets
        on
            {{ join_on_keys('row_changes', 'resets', keys[:3]) }}
            and row_changes.change_order < resets.reset_order
            and (resets.previous_reset_order is null or row_changes.change_order >= resets.previous_reset_order)
    window before_reset as (partition by {{ qualified_columns('row_changes', keys) }}, resets.reset_order)

),

key_changes as (

    -- every change, and each reset that follows a change of the key, once per key and reset: it
    -- ends the row like a delete and carries no image. One pass over the changes, each copied for
    -- its reset (a union with the resets selected apart would compute every change twice: Spark
    -- inlines a CTE at each use)
    {%- set reset_row = {
        'source_format': 'changes.reset_source_format', 'primary_key': 'null', 'op': "'t'", 'image': 'null',
        'unavailable_columns': 'cast(array() as array<string>)',
        'is_keyless': 'changes.reset_is_keyless', 'row_delta': '0', 'change_order': 'changes.reset_order',
        'change_id': 'changes.reset_id', 'commit_ts': 'changes.reset_ts',
        'batch_landing_seq': 'changes.reset_batch_landing_seq', 'floor_ts': 'changes.reset_floor_ts',
        'is_open_version': 'false',
    } %}
    {%- set change_or_reset = copied_row_values('copies.is_reset', reset_row, relation='changes') %}
    select
        {{ canonical_columns('history_changes', relation='changes', values=change_or_reset) | indent(8) }}
    from changes_before_resets as changes
        lateral view explode(if(changes.precedes_reset, array(false, true), array(false))) copies as is_reset

),

unavailable_in_key as (

    -- Unavailable values (an unchanged PostgreSQL TOAST value, the other columns of a key-only
    -- delete) are the key's previous known value of the column in source order. Each change
    -- with the columns that any change of its key leaves unavailable: most keys have none
    select
        *,
        array_distinct(flatten(collect_set(coalesce(unavailable_columns, array())) over whole_key))
            as key_unavailable_columns
    from key_changes
    window whole_key as ({{ in_key_order }} rows between unbounded preceding and unbounded following)

),

column_values as (

    -- one row per change and column of key_unavailable_columns (a key without any: one row, no
    -- column), with the column's last value known at the change: from the latest change up to
    -- it that carried the column (a reset carries none; neither does a keyless row's image,
    -- which is its identity)
    select
        changes.*,
        unavailable.column_name,
        last_value(
            if(
                changes.op = 't' or changes.is_keyless
                or array_contains(coalesce(changes.unavailable_columns, array()), unavailable.column_name)
                or not map_contains_key(coalesce(changes.image, map()), unavailable.column_name),
                null,
                named_struct('value', changes.image[unavailable.column_name])
            ),
            true
        ) over column_so_far as known
    from unavailable_in_key as changes
        lateral view explode_outer(changes.key_unavailable_columns) unavailable as column_name
    window column_so_far as (
        partition by {{ qualified_columns('changes', keys) }}, unavailable.column_name
        order by changes.change_order, changes.change_id
        rows between unbounded preceding and current row
    )

),

column_values_per_change as (

    -- the known values of each change's unavailable columns gathered on its first row
    select
        *,
        collect_list(
            if(
                array_contains(coalesce(unavailable_columns, array()), column_name),
                named_struct('name', column_name, 'known', known),
                null
            )
        ) over whole_change as resolved_columns,
        row_number() over this_change as column_number
    from column_values
    window
        this_change as (partition by {{ key_columns }}, change_order, change_id order by column_name),
        whole_change as (
            partition by {{ key_columns }}, change_order, change_id order by column_name
            rows between unbounded preceding and unbounded following
        )

),

resolved as (

    -- each change once, with its unavailable values filled in; a column that no earlier change of
    -- the key carried stays null and is named in unknown_columns
    {%- set resolved_image %}
        case
            when size(per_change.resolved_columns) = 0 then per_change.image
            else map_concat(
                map_filter(per_change.image, (rc_k, rc_v) -> not array_contains(per_change.unavailable_columns, rc_k)),
                map_from_entries(transform(per_change.resolved_columns, rc -> struct(rc.name, rc.known.value)))
            )
        end
    {%- endset %}
    select
        {{ canonical_columns('history_changes', relation='per_change', values={'image': resolved_image}) | indent(8) }},
        transform(filter(per_change.resolved_columns, rc -> rc.known is null), rc -> rc.name) as unknown_columns
    from column_values_per_change as per_change
    where per_change.column_number = 1

),

running_totals as (

    -- a keyless row's running sum of inserts less deletes (a reset adds nothing)
    select
        *,
        sum(row_delta) over so_far as running_delta
    from resolved
    window so_far as ({{ in_key_order }} rows between unbounded preceding and current row)

),

counted as (

    -- how many rows the key stands for after each change: one or none for a keyed row; for a
    -- keyless one the running sum since the table's last reset (the same window as above, so
    -- Spark sorts the changes once)
    select
        *,
        case
            when is_keyless
                then running_delta - coalesce(last_value(if(op = 't', running_delta, null), true) over so_far, 0)
            when op in ('d', 't') then 0
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
    from significant
    window
        by_key as ({{ in_key_order }}),
        later as ({{ in_key_order }} rows between 1 following and unbounded following)

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

    -- every version of the batch, and a delete for each built version of a late key that the
    -- rebuild no longer produces (the MERGE deletes it by version_id and reads nothing else of it).
    -- One outer join rather than a union with an anti join: Spark inlines a CTE wherever it is
    -- used, so a second reference to `final` would plan and compute the whole batch twice.
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
