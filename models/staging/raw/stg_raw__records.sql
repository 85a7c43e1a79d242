-- The Kafka coordinates of every landed record of every format, read straight from the raw
-- tables: the independent count that the reconciliation checks the pipeline against.

with unioned as (

    select
        'kafka_river_canal' as source_format,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        coalesce(kafka_topic_incarnation, 0) as kafka_topic_incarnation,
        landed_at,
        landing_seq
    from {{ source('cdc_raw', 'raw_kafka_river_canal') }}

    union all

    select
        'debezium' as source_format,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        coalesce(kafka_topic_incarnation, 0) as kafka_topic_incarnation,
        landed_at,
        landing_seq
    from {{ source('cdc_raw', 'raw_debezium') }}

    union all

    select
        'canal_flat' as source_format,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        coalesce(kafka_topic_incarnation, 0) as kafka_topic_incarnation,
        landed_at,
        landing_seq
    from {{ source('cdc_raw', 'raw_canal_flat') }}

    union all

    select
        'tencent_dts' as source_format,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        coalesce(kafka_topic_incarnation, 0) as kafka_topic_incarnation,
        landed_at,
        landing_seq
    from {{ source('cdc_raw', 'raw_tencent_dts') }}

    union all

    select
        'lindorm' as source_format,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        coalesce(kafka_topic_incarnation, 0) as kafka_topic_incarnation,
        landed_at,
        landing_seq
    from {{ source('cdc_raw', 'raw_lindorm') }}

)

select * from unioned
