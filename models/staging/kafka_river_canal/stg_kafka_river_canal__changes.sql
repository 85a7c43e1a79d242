with messages as (

    select *
    from {{ ref('base_kafka_river_canal__messages') }}
    where record_kind = 'dml'

),

images as (

    select
        *,
        {{ canonical_mysql_image('row_values', 'column_types',
            time_zone=topic_time_zone('kafka_topic')) }} as decoded_row,
        {{ canonical_mysql_image('old_values', 'column_types',
            time_zone=topic_time_zone('kafka_topic')) }} as decoded_old
    from messages

),

protected as (

    -- the table's excluded and hashed columns (var cdc_table_options), before anything is derived
    -- from the images
    select
        *,
        {{ protected_columns('decoded_row') }} as row_image,
        {{ protected_columns('decoded_old') }} as old_image
    from images {{ cdc_hash_secret_join() }}

),

changes as (

    select
        *,
        case
            when op = 'u'
                then map_concat(
                    map_filter(row_image, (k, v) -> not map_contains_key(old_image, k)),
                    old_image
                )
            when op = 'd' then row_image
        end as before_image,
        case when op != 'd' then row_image end as after_image,
        {{ topic_source_system('kafka_topic') }} as source_system,
        {{ row_identity('row_image', 'key_columns') }} as row_key_text
    from protected

),

final as (

    select
        'kafka_river_canal' as source_format,
        -- the source database's kind: MySQL (int_changes_unioned folds its column names' case)
        'mysql' as source_dialect,
        source_system,
        database_name,
        table_name,
        op,
        key_columns,
        row_key_text as row_key,
        map_filter(row_image, (k, v) -> array_contains(key_columns, k)) as primary_key,
        before_image as before,
        after_image as after,
        -- the format sends every value of its images
        cast(array() as array<string>) as unavailable_columns,
        {{ protected_columns('column_types', of='types') }} as column_types,
        timestamp_millis(msg.time) as commit_ts,
        timestamp_millis(msg.canalTime) as capture_ts,
        {{ change_order(['binlog_file_no', 'binlog_pos', '0', 'msg.time',
                         'kafka_partition', 'kafka_offset']) }} as change_order,
        msg.binlog as source_position,
        cast(null as string) as gtid,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        0 as row_in_message,
        landing_seq,
        {{ change_id(["'kafka_river_canal'", 'source_system', 'database_name', 'table_name',
                      'binlog_file_no', 'binlog_pos', 'op', 'row_key_text']) }} as change_id
    from changes

)

select * from final
