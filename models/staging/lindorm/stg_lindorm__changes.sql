with messages as (

    select *
    from {{ ref('base_lindorm__messages') }}
    where record_kind = 'dml'

),

protected as (

    -- the table's excluded and hashed columns (var cdc_table_options), before anything is derived
    -- from the images
    select
        *,
        {{ protected_columns('before_image') }} as protected_before,
        {{ protected_columns('after_image') }} as protected_after
    from messages {{ cdc_hash_secret_join() }}

),

keyed as (

    select
        *,
        case when op = 'd' then protected_before else protected_after end as key_image,
        case when op in ('u', 'd') then protected_before end as before,
        case when op != 'd' then protected_after end as after,
        -- the Lindorm cluster; a record that does not name it stands for its topic
        coalesce(msg.source.db, {{ topic_source_system('kafka_topic') }}) as source_system
    from protected

),

final as (

    select
        'lindorm' as source_format,
        -- the source database's kind (int_changes_unioned keeps Lindorm's column names as sent)
        'lindorm' as source_dialect,
        source_system,
        database_name,
        table_name,
        op,
        key_columns,
        {{ row_identity('key_image', 'key_columns') }} as row_key,
        map_filter(key_image, (k, v) -> array_contains(key_columns, k)) as primary_key,
        before,
        after,
        -- the format sends every value of its images
        cast(array() as array<string>) as unavailable_columns,
        {{ protected_columns('column_types', of='types') }} as column_types,
        timestamp_millis(msg.source.ts_ms) as commit_ts,
        timestamp_millis(msg.ts_ms) as capture_ts,
        {{ change_order(['msg.source.ts_ms', 'kafka_partition', 'kafka_offset']) }} as change_order,
        concat('source.ts_ms ', msg.source.ts_ms, ' ts_ms ', msg.ts_ms) as source_position,
        cast(null as string) as gtid,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        0 as row_in_message,
        landing_seq,
        -- no position: the same content is the same change (also the same capture time, ts_ms, so
        -- two identical rows of a keyless table written in one millisecond stay two changes)
        {{ change_id(["'lindorm'", 'source_system', 'database_name', 'table_name', 'op',
                      'msg.source.ts_ms', 'msg.ts_ms',
                      "coalesce(to_json(array_sort(map_entries(before))), 'null')",
                      "coalesce(to_json(array_sort(map_entries(after))), 'null')"]) }} as change_id
    from keyed

)

select * from final
