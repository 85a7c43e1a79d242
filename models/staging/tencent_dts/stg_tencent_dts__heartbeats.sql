-- Tencent DTS HEARTBEAT records: DTS writes them into every partition while the source is quiet,
-- so their time tells how current the stream is even when no table changes.
-- `heartbeatTimestamp` (seconds) is the heartbeat's source time; else the record's `timestamp`.

with messages as (

    select *
    from {{ ref('base_tencent_dts__messages') }}
    where record_kind = 'control' and message_type = 'HEARTBEAT'

),

final as (

    select
        'tencent_dts' as source_format,
        coalesce(msg.serverId, {{ topic_source_system('kafka_topic') }}) as source_system,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        timestamp_seconds(coalesce(msg.heartbeatTimestamp, msg.timestamp)) as heartbeat_ts,
        landing_seq
    from messages
    where coalesce(msg.heartbeatTimestamp, msg.timestamp) is not null

)

select * from final
