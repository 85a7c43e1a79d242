-- One row per Canal DDL message (isDdl = true): CREATE, ALTER, ERASE, RENAME, TRUNCATE, CINDEX,
-- DINDEX, QUERY. The statement is kept as sent.

with messages as (

    select *
    from {{ ref('base_canal_flat__messages') }}
    where record_kind = 'ddl'

),

final as (

    select
        'canal_flat' as source_format,
        {{ topic_source_system('kafka_topic') }} as source_system,
        msg.database as database_name,
        msg.`table` as table_name,
        upper(msg.type) as ddl_type,
        msg.sql as ddl_statement,
        timestamp_millis(msg.es) as commit_ts,
        -- the parts of the changes' order (row index 0), so a TRUNCATE and the rows sent after it
        -- in one Canal batch (same `es` and `id`) compare by offset
        {{ change_order(['msg.es', 'msg.id', 'kafka_partition', 'kafka_offset', 'message_in_record', '0']) }}
            as change_order,
        concat('id ', msg.id, ' es ', msg.es) as source_position,
        msg.gtid,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        landing_seq,
        {{ change_id(["'canal_flat'", topic_source_system('kafka_topic'), 'msg.database', 'msg.`table`',
                      'msg.es', 'msg.id', 'msg.`sql`']) }}
            as schema_change_id
    from messages

)

select * from final
