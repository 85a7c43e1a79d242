with built as (

    -- how far builds have read each format's raw table: records landed later await the next build
    select
        source_format,
        max(landing_seq) as built_landing_seq
    from {{ ref('int_raw_records_unioned') }}
    group by source_format

),

raw_per_incarnation as (

    -- a topic deleted and created again (landed with --topic-incarnation) restarts its offsets:
    -- offset ranges and gaps are per incarnation
    select
        records.source_format,
        records.kafka_topic,
        records.kafka_partition,
        records.kafka_topic_incarnation,
        count_if(records.landing_seq <= built.built_landing_seq) as raw_records,
        count_if(built.built_landing_seq is null or records.landing_seq > built.built_landing_seq)
            as awaiting_build_records,
        min(if(records.landing_seq <= built.built_landing_seq, records.kafka_offset, null)) as first_offset,
        max(if(records.landing_seq <= built.built_landing_seq, records.kafka_offset, null)) as last_offset,
        max({{ landing_time('records.landing_seq') }}) as last_landed_at
    from {{ ref('stg_raw__records') }} as records
    left join built
        on records.source_format = built.source_format
    group by records.source_format, records.kafka_topic, records.kafka_partition, records.kafka_topic_incarnation

),

raw as (

    select
        source_format,
        kafka_topic,
        kafka_partition,
        max(kafka_topic_incarnation) as kafka_topic_incarnation,
        sum(raw_records) as raw_records,
        sum(awaiting_build_records) as awaiting_build_records,
        max_by(first_offset, kafka_topic_incarnation) as first_offset,
        max_by(last_offset, kafka_topic_incarnation) as last_offset,
        sum(coalesce(last_offset - first_offset + 1 - raw_records, 0)) as offset_gaps,
        max(last_landed_at) as last_landed_at
    from raw_per_incarnation
    group by source_format, kafka_topic, kafka_partition

),

outcomes as (

    select
        source_format,
        kafka_topic,
        kafka_partition,
        -- every staged record has exactly one message numbered 0 (a record of no messages keeps
        -- one row), so this counts records without a shuffle of every message; a record staged
        -- twice counts twice and shows as negative unaccounted records
        count_if(message_in_record = 0) as accounted_records,
        count_if(record_kind = 'dml') as dml_messages,
        count_if(record_kind = 'ddl') as ddl_messages,
        count_if(record_kind = 'control') as control_messages,
        count_if(record_kind = 'rejected') as rejected_messages,
        count_if(record_kind = 'filtered') as filtered_messages
    from {{ ref('int_raw_records_unioned') }}
    group by source_format, kafka_topic, kafka_partition

),

final as (

    -- a full join: a partition whose raw records were all removed (cdc-lake unland) while the
    -- models still hold what they became shows, with negative unaccounted_records, until rebuilt
    select
        coalesce(raw.source_format, outcomes.source_format) as source_format,
        coalesce(raw.kafka_topic, outcomes.kafka_topic) as kafka_topic,
        coalesce(raw.kafka_partition, outcomes.kafka_partition) as kafka_partition,
        coalesce(raw.kafka_topic_incarnation, 0) as kafka_topic_incarnation,
        raw.first_offset,
        raw.last_offset,
        coalesce(raw.raw_records, 0) as raw_records,
        coalesce(outcomes.dml_messages, 0) as dml_messages,
        coalesce(outcomes.ddl_messages, 0) as ddl_messages,
        coalesce(outcomes.control_messages, 0) as control_messages,
        coalesce(outcomes.rejected_messages, 0) as rejected_messages,
        coalesce(outcomes.filtered_messages, 0) as filtered_messages,
        coalesce(raw.raw_records, 0) - coalesce(outcomes.accounted_records, 0) as unaccounted_records,
        coalesce(raw.offset_gaps, 0) as offset_gaps,
        coalesce(raw.awaiting_build_records, 0) as awaiting_build_records,
        raw.last_landed_at
    from raw
    full outer join outcomes
        on
            raw.source_format = outcomes.source_format
            and raw.kafka_topic = outcomes.kafka_topic
            and raw.kafka_partition = outcomes.kafka_partition

)

select * from final
