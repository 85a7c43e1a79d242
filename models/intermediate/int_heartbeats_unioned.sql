-- Heartbeats of every format that sends them with a source time (Tencent DTS today), in one
-- shape: the base of the heartbeat figures of cdc_lag.

with tencent_dts as (

    select
        source_format,
        source_system,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        heartbeat_ts,
        landing_seq
    from {{ ref('stg_tencent_dts__heartbeats') }}

),

final as (

    select * from tencent_dts

)

select * from final
