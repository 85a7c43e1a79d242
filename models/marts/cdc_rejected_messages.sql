{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key=[
            'source_format', 'kafka_topic', 'kafka_partition', 'kafka_offset', 'message_in_record', 'landing_seq'
        ],
        merge_insert_only=true,
    )
}}

-- landing_seq is part of a record's identity: the same offset of a topic deleted and created again
-- (--topic-incarnation) comes from another landing commit.

with new_rejects as (

    select *
    from {{ ref('int_raw_records_unioned') }}
    where
        record_kind = 'rejected'
        -- no batch marker: most landings hold no reject, and the write's own probe of this plain
        -- filter is cheap and keeps such runs from making empty snapshots
        and {{ landed_after(landing_watermarks()) }}

),

final as (

    select
        source_format,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        message_in_record,
        rejected_value as raw_value,
        reject_reason,
        landed_at,
        landing_seq
    from new_rejects

)

select * from final
