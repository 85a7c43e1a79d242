with messages as (

    select *
    from {{ ref('base_debezium__messages') }}
    where record_kind = 'ddl'

),

positioned as (

    select
        *,
        coalesce(msg.position.file, msg.source.file) as binlog_file,
        coalesce(msg.position.pos, msg.source.pos) as binlog_pos,
        coalesce(
            nullif(msg.source.ts_ms, 0), nullif(msg.position.ts_sec, 0) * 1000,
            nullif(msg.source.ts_sec, 0) * 1000, msg.ts_ms
        ) as commit_ms,
        coalesce(lower(msg.position.snapshot) not in ('false', ''), is_snapshot) as is_snapshot_ddl,
        coalesce(
            msg.ddl,
            case
                when op = 't'
                    then coalesce(
                        msg.source.query, concat('TRUNCATE TABLE ', {{ quote_identifier_text('table_name') }})
                    )
            end
        ) as statement
    from messages

),

final as (

    select
        'debezium' as source_format,
        source_system,
        database_name,
        table_name,
        case when op = 't' then 'TRUNCATE' else {{ ddl_statement_type('statement') }} end as ddl_type,
        statement as ddl_statement,
        timestamp_millis(commit_ms) as commit_ts,
        -- a PostgreSQL TRUNCATE is ordered among the table's row changes exactly as they are
        -- (stg_debezium__changes: last commit LSN, LSN, row)
        case
            when msg.source.lsn is not null
                then {{ change_order([postgres_commit_lsn('msg.source.sequence'), 'msg.source.lsn', '0',
                                      'commit_ms', 'kafka_partition', 'kafka_offset']) }}
            else {{ change_order([binlog_file_number('binlog_file'), 'binlog_pos',
                                  'commit_ms', 'kafka_partition', 'kafka_offset']) }}
        end as change_order,
        concat_ws(
            ' ',
            case
                when binlog_file is not null then concat(binlog_file, ':', binlog_pos)
                when msg.source.lsn is not null then concat('lsn ', msg.source.lsn)
            end,
            case when is_snapshot_ddl then 'snapshot' end
        ) as source_position,
        coalesce(msg.position.gtids, msg.source.gtid) as gtid,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        landing_seq,
        {{ change_id(["'debezium'", 'source_system', 'database_name', 'binlog_file', 'binlog_pos', 'msg.source.lsn',
                      'commit_ms', 'statement']) }} as schema_change_id
    from positioned

)

select * from final
