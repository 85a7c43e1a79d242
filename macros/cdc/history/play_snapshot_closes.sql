{% macro play_snapshot_closes(changes, snapshots) %}
    {%- set keys = cdc_row_key_columns() -%}
    {%- set close_row = {
        'primary_key': 'null', 'op': "'a'", 'image': 'null', 'unavailable_columns': 'cast(array() as array<string>)',
        'row_delta': '0', 'change_order': 'changes.close_order', 'change_id': 'changes.close_id',
        'commit_ts': 'changes.close_ts', 'snapshot_order': 'null',
    } -%}
with changes_before_snapshots as (

    -- each change with the first complete snapshot of its table after it, if any; whether that
    -- snapshot read the key (a change of the key is one of its rows); and whether the change is
    -- the key's last one before it (precedes_snapshot)
    select /*+ broadcast(snapshots) */
        row_changes.*,
        snapshots.snapshot_order as close_order,
        snapshots.snapshot_id as close_id,
        snapshots.snapshot_ts as close_ts,
        coalesce(
            array_contains(collect_set(row_changes.snapshot_order) over whole_key, snapshots.snapshot_order), false
        ) as read_by_snapshot,
        snapshots.snapshot_order is not null
        and row_number() over (
            partition by {{ qualified_columns('row_changes', keys) }}, snapshots.snapshot_order
            order by row_changes.change_order desc, row_changes.change_id desc
        ) = 1 as precedes_snapshot
    from {{ changes }} as row_changes
    left join {{ snapshots }} as snapshots
        on
            {{ join_on_keys('row_changes', 'snapshots', keys[:3]) }}
            and row_changes.change_order < snapshots.snapshot_order
            and (
                snapshots.previous_snapshot_order is null
                or row_changes.change_order >= snapshots.previous_snapshot_order
            )
    window whole_key as (partition by {{ qualified_columns('row_changes', keys) }})

)

-- after the key's last change before the snapshot, a close if the snapshot did not read the key
-- (a keyless row always: the snapshot's reads count the table's identical rows afresh)
select
    {{ canonical_columns('history_changes', relation='changes',
                         values=copied_row_values('copies.is_close', close_row, relation='changes')) | indent(4) }}
from changes_before_snapshots as changes
    lateral view explode(
        if(
            changes.precedes_snapshot and (coalesce(changes.is_keyless, false) or not changes.read_by_snapshot),
            array(false, true),
            array(false)
        )
    ) copies as is_close
{%- endmacro %}
