with messages as (

    select *
    from {{ ref('base_debezium__messages') }}
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

positioned as (

    select
        *,
        {{ binlog_file_number('msg.source.file') }} as binlog_file_number,
        {{ postgres_commit_lsn('msg.source.sequence') }} as commit_lsn,
        -- the commit time: Debezium's source.ts_ms, dtle's source.ts_sec; snapshot rows (0) and
        -- dtle DML (ts_sec 0) fall back to the time the tool read the row (payload ts_ms)
        coalesce(nullif(msg.source.ts_ms, 0), nullif(msg.source.ts_sec, 0) * 1000, msg.ts_ms) as commit_ms,
        case when op = 'd' then protected_before else protected_after end as key_image
    from protected

),

identified as (

    select
        *,
        -- where the position does not tell changes apart, their content does: embedded engines
        -- (Flink CDC) write `file: ""`, `pos: 0`, `row: 0` on every record, and snapshot rows share
        -- one position. Identical rows of a keyless table read by a snapshot differ only in
        -- their Kafka coordinates.
        case
            when is_snapshot and size(key_columns) = 0
                then concat_ws(':', kafka_topic, kafka_partition, kafka_offset)
            when
                is_snapshot
                or (coalesce(msg.source.file, '') = '' and coalesce(msg.source.pos, 0) = 0 and msg.source.lsn is null)
                then to_json(struct(
                    msg.ts_ms,
                    msg.source.ts_ms,
                    array_sort(map_entries(protected_before)) as before_image,
                    array_sort(map_entries(protected_after)) as after_image
                ))
        end as content_identity
    from positioned

),

final as (

    select
        'debezium' as source_format,
        -- the source database's kind: the connector (mysql, mariadb, postgresql, ...); dtle names
        -- none and captures MySQL. int_changes_unioned folds MySQL's and MariaDB's column names' case.
        coalesce(lower(msg.source.connector), 'mysql') as source_dialect,
        source_system,
        database_name,
        table_name,
        op,
        key_columns,
        {{ row_identity('key_image', 'key_columns') }} as row_key,
        map_filter(key_image, (k, v) -> array_contains(key_columns, k)) as primary_key,
        case when op in ('u', 'd') then protected_before end as before,
        case when op != 'd' then protected_after end as after,
        {{ protected_columns('unavailable_columns', of='names') }} as unavailable_columns,
        {{ protected_columns('column_types', of='types') }} as column_types,
        timestamp_millis(commit_ms) as commit_ts,
        timestamp_millis(msg.ts_ms) as capture_ts,
        {{ change_order(['coalesce(binlog_file_number, commit_lsn)', 'coalesce(msg.source.pos, msg.source.lsn)',
                         'msg.source.row',
                         'commit_ms', 'kafka_partition', 'kafka_offset']) }} as change_order,
        concat_ws(
            ' ',
            case
                when msg.source.file is not null then concat(msg.source.file, ':', msg.source.pos)
                when msg.source.lsn is not null then concat('lsn ', msg.source.lsn)
            end,
            concat('row ', coalesce(msg.source.row, 0)),
            case when is_snapshot then concat('snapshot ', lower(msg.source.snapshot)) end
        ) as source_position,
        msg.source.gtid,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        0 as row_in_message,
        landing_seq,
        {{ change_id(["'debezium'", 'source_system', 'database_name', 'table_name', 'msg.source.file',
                      'msg.source.pos', 'msg.source.lsn', 'msg.source.row', 'is_snapshot', 'op',
                      row_identity('key_image', 'key_columns'), 'content_identity']) }} as change_id
    from identified

)

select * from final
