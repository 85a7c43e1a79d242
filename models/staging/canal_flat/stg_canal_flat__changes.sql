with messages as (

    select *
    from {{ ref('base_canal_flat__messages') }}
    where record_kind = 'dml'

),

rows as (

    select
        messages.kafka_topic,
        messages.kafka_partition,
        messages.kafka_offset,
        messages.landing_seq,
        messages.message_in_record,
        messages.msg,
        r.row_index,
        r.data_row as sent_data,
        messages.msg.old[r.row_index] as sent_old,
        {{ canonical_mysql_image('r.data_row', 'messages.msg.mysqlType',
            time_zone=topic_time_zone('messages.kafka_topic')) }} as decoded_data,
        {{ canonical_mysql_image('messages.msg.old[r.row_index]', 'messages.msg.mysqlType',
            time_zone=topic_time_zone('messages.kafka_topic')) }} as decoded_old,
        {{ table_key_columns('messages.msg.pkNames', 'messages.msg.database', 'messages.msg.`table`') }} as key_columns,
        case upper(messages.msg.type)
            when 'INSERT' then 'c'
            when 'UPDATE' then 'u'
            when 'DELETE' then 'd'
            when 'INIT' then 'r'
        end as op
    from messages
        lateral view posexplode(messages.msg.data) r as row_index, data_row

),

protected as (

    -- the table's excluded and hashed columns (var cdc_table_options), before anything is derived
    -- from the images: the values as sent too, which the change id reads
    {%- set db, tbl = 'msg.database', 'msg.`table`' %}
    select
        *,
        {{ protected_columns('sent_data', database_name=db, table_name=tbl) }} as raw_data,
        {{ protected_columns('sent_old', database_name=db, table_name=tbl) }} as raw_old,
        {{ protected_columns('decoded_data', database_name=db, table_name=tbl) }} as row_data,
        {{ protected_columns('decoded_old', database_name=db, table_name=tbl) }} as row_old,
        {{ protected_columns('msg.mysqlType', of='types', database_name=db, table_name=tbl) }} as column_types
    from rows {{ cdc_hash_secret_join() }}

),

images as (

    select
        *,
        case
            when op = 'u'
                then map_concat(
                    map_filter(row_data, (k, v) -> not map_contains_key(coalesce(row_old, map()), k)),
                    coalesce(row_old, map())
                )
            when op = 'd' then row_data
        end as before_image,
        case when op != 'd' then row_data end as after_image
    from protected

),

final as (

    select
        'canal_flat' as source_format,
        -- the source database's kind: MySQL (int_changes_unioned folds its column names' case)
        'mysql' as source_dialect,
        {{ topic_source_system('kafka_topic') }} as source_system,
        msg.database as database_name,
        msg.`table` as table_name,
        op,
        key_columns,
        {{ row_identity('row_data', 'key_columns') }} as row_key,
        map_filter(row_data, (k, v) -> array_contains(key_columns, k)) as primary_key,
        before_image as before,
        after_image as after,
        -- the format sends every value of its images
        cast(array() as array<string>) as unavailable_columns,
        column_types,
        timestamp_millis(msg.es) as commit_ts,
        timestamp_millis(msg.ts) as capture_ts,
        {{ change_order(['msg.es', 'msg.id', 'kafka_partition', 'kafka_offset', 'message_in_record',
                         'row_index']) }} as change_order,
        concat('id ', msg.id, ' es ', msg.es, ' row ', row_index) as source_position,
        msg.gtid,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        row_index as row_in_message,
        landing_seq,
        {{ change_id(["'canal_flat'", topic_source_system('kafka_topic'), 'msg.database', 'msg.`table`',
                      'msg.es', 'msg.id', 'kafka_topic', 'kafka_partition', 'kafka_offset',
                      'message_in_record', 'row_index', row_identity('row_data', 'key_columns'), 'op',
                      'to_json(array_sort(map_entries(raw_data)))',
                      'to_json(array_sort(map_entries(raw_old)))']) }} as change_id
    from images

)

select * from final
