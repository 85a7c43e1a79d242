{% macro history_key_classes(touched_keys, table_resets, snapshots, watermark, resets_landed=false,
                             snapshots_landed=false, broadcast_keys=false) %}
    {%- set keys = cdc_row_key_columns() -%}
    {%- set key_columns = keys | join(', ') -%}
    {%- if not is_incremental() -%}
select
    {{ key_columns }},
    batch_landing_seq,
    cast(null as timestamp) as last_built_ts,
    true as is_late
from {{ touched_keys }}
    {%- else -%}
with reset_keys as (

    -- keys of a table reset landed in this batch that changed before the reset
    select
        {{ qualified_columns('changes', keys) }},
        max(resets.landing_seq) as batch_landing_seq
    from {{ ref('cdc_changelog') }} as changes
    inner join {{ table_resets }} as resets
        on
            {{ join_on_keys('changes', 'resets', keys[:3]) }}
            and changes.change_order < resets.reset_order
    where {{ landed_after(watermark, 'resets.landing_seq', 'resets.source_format') if resets_landed else 'false' }}
    group by {{ qualified_columns('changes', keys) }}

),

snapshot_keys as (

    -- keys of a snapshot completed in this batch that changed before it and that it did not read
    -- (a keyless row it did read too: a complete snapshot counts the table's keyless rows afresh)
    select
        {{ qualified_columns('changes', keys) }},
        max(snapshots.completed_landing_seq) as batch_landing_seq
    from {{ ref('cdc_changelog') }} as changes
    inner join {{ snapshots }} as snapshots
        on {{ join_on_keys('changes', 'snapshots', keys[:3]) }}
    where
        {{ landed_after(watermark, 'snapshots.completed_landing_seq', 'snapshots.source_format')
           if snapshots_landed else 'false' }}
    group by {{ qualified_columns('changes', keys) }}, snapshots.snapshot_order
    having
        count_if(changes.change_order < snapshots.snapshot_order) > 0
        and (
            coalesce(bool_or(changes.is_keyless), false)
            or count_if({{ snapshot_order('changes.source_position', 'changes.change_order') }}
                        = snapshots.snapshot_order) = 0
        )

),

reached_keys as (

    -- the keys a reset or a snapshot of this batch reaches, whatever their new changes
    select
        {{ key_columns }},
        max(batch_landing_seq) as batch_landing_seq
    from (
        select * from reset_keys
        union all
        select * from snapshot_keys
    ) as reached
    group by {{ key_columns }}

),

built_keys as (

    -- what earlier builds saw of each touched key; a small batch's keys are broadcast, so the
    -- scan of the change log is cut map-side instead of shuffled whole
    select {% if broadcast_keys %}/*+ broadcast(touched_keys) */{% endif %}
        {{ key_columns }},
        max(change_order) as last_built_order,
        max(commit_ts) as last_built_ts
    from {{ ref('cdc_changelog') }} as changes
    left semi join {{ touched_keys }} as touched_keys
        on {{ join_on_keys('changes', 'touched_keys', keys) }}
    where not {{ landed_after(watermark, 'changes.landing_seq', 'changes.source_format') }}
    group by {{ key_columns }}

),

last_resets as (

    select source_system, database_name, table_name, max(reset_order) as last_reset_order
    from {{ table_resets }}
    group by source_system, database_name, table_name

),

last_snapshots as (

    -- per table, the last complete snapshot's position and, of those complete before this
    -- batch, the last row read: a new row of a snapshot whose closes were played is late
    select
        source_system,
        database_name,
        table_name,
        max(snapshot_order) as last_snapshot_order,
        max(if(
            not {{ landed_after(watermark, 'completed_landing_seq') }}, last_read_order, null
        )) as built_read_order
    from {{ snapshots }}
    group by source_system, database_name, table_name

),

touched as (

    select /*+ broadcast(last_resets, last_snapshots) */
        {{ qualified_columns('touched_keys', keys) }},
        greatest(touched_keys.batch_landing_seq, reached_keys.batch_landing_seq) as batch_landing_seq,
        built_keys.last_built_ts,
        coalesce(built_keys.last_built_order >= touched_keys.first_new_order, false)
        or coalesce(last_resets.last_reset_order > touched_keys.first_new_order, false)
        or coalesce(last_snapshots.last_snapshot_order > touched_keys.first_new_order, false)
        or coalesce(last_snapshots.built_read_order >= touched_keys.first_new_order, false)
        or reached_keys.row_key is not null as is_late
    from {{ touched_keys }} as touched_keys
    left join built_keys
        on {{ join_on_keys('touched_keys', 'built_keys', keys) }}
    left join reached_keys
        on {{ join_on_keys('touched_keys', 'reached_keys', keys) }}
    left join last_resets
        on {{ join_on_keys('touched_keys', 'last_resets', keys[:3]) }}
    left join last_snapshots
        on {{ join_on_keys('touched_keys', 'last_snapshots', keys[:3]) }}

)

select
    {{ key_columns }},
    batch_landing_seq,
    last_built_ts,
    is_late
from touched

union all

select
    {{ qualified_columns('reached_keys', keys) }},
    reached_keys.batch_landing_seq,
    cast(null as timestamp) as last_built_ts,
    true as is_late
from reached_keys
left anti join {{ touched_keys }} as touched_keys
    on {{ join_on_keys('reached_keys', 'touched_keys', keys) }}
    {%- endif %}
{%- endmacro %}
