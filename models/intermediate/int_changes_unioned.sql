-- All formats' row changes in the canonical shape, before deduplication: one branch per format of
-- cdc_formats, each the columns of cdc_columns('staged_changes') by name, in that one order (macro
-- canonical_columns). An update that moves a row to another identity (a primary-key change; any
-- update of a keyless row) becomes a delete + an insert here, once for every format (Debezium
-- already sends it so). The project's table filter (vars `cdc_include_tables` /
-- `cdc_exclude_tables`, macro `cdc_table_included`) is applied here, once for every format;
-- int_raw_records_unioned accounts the records it drops as `filtered`.

with unioned as (

    {% for fmt in cdc_formats() %}
        select
            {{ canonical_columns('staged_changes', relation='changes') | indent(12) }}
        from {{ ref('stg_' ~ fmt ~ '__changes') }} as changes
        {% if not loop.last %}union all{% endif %}
    {% endfor %}

),

included as (

    select
        *,
        size(key_columns) = 0 as is_keyless,
        -- an update is keyed by its after image; its before image may name another row
        case when op = 'u' then {{ row_identity('before', 'key_columns') }} end as before_row_key
    from unioned
    where {{ cdc_table_included('database_name', 'table_name') }}

),

split as (

    -- An update whose before image has another identity than its after image (a primary-key
    -- change, or any change of a keyless row) is a delete of the old row and an insert of the new
    -- one. Both halves keep the update's position; their ids derive from the update's.
    select
        included.*,
        half.*
    from included
        lateral view explode(
            case
                when op = 'u' and before_row_key != row_key
                    then array(
                        named_struct(
                            'half_op', 'd', 'half_row_key', before_row_key, 'half_id_suffix', 'key change: old row'
                        ),
                        named_struct('half_op', 'c', 'half_row_key', row_key, 'half_id_suffix', 'key change: new row')
                    )
                else array(named_struct('half_op', op, 'half_row_key', row_key, 'half_id_suffix', ''))
            end
        ) halves as half

),

final as (

    select
        case when half_id_suffix = '' then change_id else md5(concat(change_id, ' ', half_id_suffix)) end
            as change_id,
        source_format,
        source_system,
        database_name,
        table_name,
        half_op as op,
        key_columns,
        is_keyless,
        half_row_key as row_key,
        case
            when half_op = op then primary_key
            when half_op = 'd' then map_filter(before, (k, v) -> array_contains(key_columns, k))
            else map_filter(after, (k, v) -> array_contains(key_columns, k))
        end as primary_key,
        case when half_op != 'c' then before end as before,
        case when half_op != 'd' then after end as after,
        column_types,
        commit_ts,
        capture_ts,
        change_order,
        source_position,
        gtid,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        row_in_message,
        landing_seq
    from split

)

select * from final
