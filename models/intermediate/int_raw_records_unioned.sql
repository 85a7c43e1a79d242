-- Every parsed raw record of every format with what it turned out to be (dml, ddl, control,
-- rejected): the base of the quarantine and of the reconciliation.

with canal_flat as (

    select
        'canal_flat' as source_format,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        message_in_record,
        landing_seq,
        landed_at,
        record_kind,
        reject_reason,
        rejected_value
    from {{ ref('base_canal_flat__messages') }}

),

unioned as (

    select * from canal_flat

)

select * from unioned
