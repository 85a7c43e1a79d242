{% macro play_table_resets(changes, table_resets) %}
    {%- set keys = cdc_row_key_columns() -%}
    {%- set reset_row = {
        'source_format': 'changes.reset_source_format', 'primary_key': 'null', 'op': "'t'", 'image': 'null',
        'unavailable_columns': 'cast(array() as array<string>)',
        'is_keyless': 'changes.reset_is_keyless', 'row_delta': '0', 'change_order': 'changes.reset_order',
        'change_id': 'changes.reset_id', 'commit_ts': 'changes.reset_ts',
        'batch_landing_seq': 'changes.reset_batch_landing_seq', 'floor_ts': 'changes.reset_floor_ts',
        'is_open_version': 'false', 'snapshot_order': 'null',
    } -%}
with changes_before_resets as (

    -- each change with the first reset of its table after it, if any, and what that reset's row
    -- carries: over the key's changes before the reset, the least format, whether any is
    -- keyless, the latest batch and running commit time; the key's last change before the reset
    -- brings it in (precedes_reset)
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
    from {{ changes }} as row_changes
    left join {{ table_resets }} as resets
        on
            {{ join_on_keys('row_changes', 'resets', keys[:3]) }}
            and row_changes.change_order < resets.reset_order
            and (resets.previous_reset_order is null or row_changes.change_order >= resets.previous_reset_order)
    window before_reset as (partition by {{ qualified_columns('row_changes', keys) }}, resets.reset_order)

)

select
    {{ canonical_columns('history_changes', relation='changes',
                         values=copied_row_values('copies.is_reset', reset_row, relation='changes')) | indent(4) }}
from changes_before_resets as changes
    lateral view explode(if(changes.precedes_reset, array(false, true), array(false))) copies as is_reset
{%- endmacro %}
