-- Proof that nothing was lost, per format, topic and partition: the raw records landed, what each
-- became (row changes, DDL, control records, rejects, filtered out), the records no model accounts
-- for (must be 0), and gaps in the offset sequence (offsets never landed: lost messages, or Kafka
-- transaction markers and compaction, which also consume offsets).

with raw as (

    select
        source_format,
        kafka_topic,
        kafka_partition,
        count(*) as raw_records,
        min(kafka_offset) as first_offset,
        max(kafka_offset) as last_offset,
        max(landed_at) as last_landed_at
    from {{ ref('stg_raw__records') }}
    group by source_format, kafka_topic, kafka_partition

),

outcomes as (

    select
        source_format,
        kafka_topic,
        kafka_partition,
        count(distinct kafka_offset) as accounted_records,
        count_if(record_kind = 'dml') as dml_messages,
        count_if(record_kind = 'ddl') as ddl_messages,
        count_if(record_kind = 'control') as control_messages,
        count_if(record_kind = 'rejected') as rejected_messages,
        count_if(record_kind = 'filtered') as filtered_messages
    from {{ ref('int_raw_records_unioned') }}
    group by source_format, kafka_topic, kafka_partition

),

final as (

    select
        raw.source_format,
        raw.kafka_topic,
        raw.kafka_partition,
        raw.first_offset,
        raw.last_offset,
        raw.raw_records,
        coalesce(outcomes.dml_messages, 0) as dml_messages,
        coalesce(outcomes.ddl_messages, 0) as ddl_messages,
        coalesce(outcomes.control_messages, 0) as control_messages,
        coalesce(outcomes.rejected_messages, 0) as rejected_messages,
        coalesce(outcomes.filtered_messages, 0) as filtered_messages,
        raw.raw_records - coalesce(outcomes.accounted_records, 0) as unaccounted_records,
        raw.last_offset - raw.first_offset + 1 - raw.raw_records as offset_gaps,
        raw.last_landed_at
    from raw
    left join outcomes
        on
            raw.source_format = outcomes.source_format
            and raw.kafka_topic = outcomes.kafka_topic
            and raw.kafka_partition = outcomes.kafka_partition

)

select * from final
