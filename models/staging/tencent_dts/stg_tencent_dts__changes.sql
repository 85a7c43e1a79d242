with messages as (

    select *
    from {{ ref('base_tencent_dts__messages') }}
    where record_kind = 'dml'

),

images as (

    select
        *,
        {{ canonical_mysql_image('old_values', 'column_types', binary_encoding='hex',
            time_zone=topic_time_zone('kafka_topic')) }} as decoded_old,
        {{ canonical_mysql_image('new_values', 'column_types', binary_encoding='hex',
            time_zone=topic_time_zone('kafka_topic')) }} as decoded_new
    from messages

),

protected as (

    -- the table's excluded and hashed columns (var cdc_table_options), before anything is derived
    -- from the images
    select
        *,
        {{ protected_columns('decoded_old') }} as old_image,
        {{ protected_columns('decoded_new') }} as new_image
    from images {{ cdc_hash_secret_join() }}

),

changes as (

    select
        *,
        case
            when op = 'u'
                then map_concat(
                    map_filter(new_image, (k, v) -> not map_contains_key(old_image, k)),
                    old_image
                )
            when op = 'd' then old_image
        end as before_image,
        case when op != 'd' then new_image end as after_image,
        case when op = 'd' then old_image else new_image end as key_image,
        coalesce(msg.serverId, {{ topic_source_system('kafka_topic') }}) as source_system
    from protected

),

keyed as (

    select
        *,
        {{ row_identity('key_image', 'key_columns') }} as row_key_text
    from changes

),

final as (

    select
        'tencent_dts' as source_format,
        -- the source database's kind: MySQL (int_changes_unioned folds its column names' case)
        'mysql' as source_dialect,
        source_system,
        database_name,
        table_name,
        op,
        key_columns,
        row_key_text as row_key,
        map_filter(key_image, (k, v) -> array_contains(key_columns, k)) as primary_key,
        before_image as before,
        after_image as after,
        -- the format sends every value of its images
        cast(array() as array<string>) as unavailable_columns,
        {{ protected_columns('column_types', of='types') }} as column_types,
        timestamp_seconds(msg.timestamp) as commit_ts,
        timestamp_millis(msg.readerTimestamp) as capture_ts,
        {{ change_order(['binlog_file_no', 'binlog_pos', 'record_id', 'msg.timestamp',
                         'kafka_partition', 'kafka_offset']) }} as change_order,
        concat_ws(' ', msg.fileName, msg.position, concat('id ', msg.id)) as source_position,
        msg.gtid,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        0 as row_in_message,
        landing_seq,
        {{ change_id(["'tencent_dts'", 'source_system', 'database_name', 'table_name',
                      'binlog_file_no', 'binlog_pos', 'op', 'row_key_text']) }} as change_id
    from keyed

)

select * from final
