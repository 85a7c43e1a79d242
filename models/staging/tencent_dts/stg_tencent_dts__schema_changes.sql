-- One row per Tencent DTS DDL record, with the statement as sent (`sql`). The DDL kind is read
-- from the statement in Canal's vocabulary (CREATE, ALTER, ERASE, RENAME, TRUNCATE, ...), like
-- every other format's, so a DROP TABLE is an ERASE and ends the table's rows (is_table_reset).

with records as (

    select *
    from {{ ref('base_tencent_dts__messages') }}
    where record_kind = 'ddl'

),

final as (

    select
        'tencent_dts' as source_format,
        coalesce(msg.serverId, {{ topic_source_system('kafka_topic') }}) as source_system,
        database_name,
        table_name,
        {{ ddl_statement_type('msg.sql') }} as ddl_type,
        msg.sql as ddl_statement,
        timestamp_seconds(msg.timestamp) as commit_ts,
        {{ change_order(['binlog_file_no', 'binlog_pos', 'record_id', 'msg.timestamp',
                         'kafka_partition', 'kafka_offset']) }} as change_order,
        concat_ws(' ', msg.fileName, msg.position, concat('id ', msg.id)) as source_position,
        msg.gtid,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        landing_seq,
        {{ change_id(["'tencent_dts'", 'coalesce(msg.serverId, ' ~ topic_source_system('kafka_topic') ~ ')',
                      'database_name', 'binlog_file_no', 'binlog_pos', 'msg.sql']) }} as schema_change_id
    from records

)

select * from final
