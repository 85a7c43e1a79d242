{% test landed_records_staged(model, staged) %}
    {%- set staged_cut = tested_batch(staged, own_batch=true) if execute else none -%}
    {%- set landed_cut = none -%}
    {%- if staged_cut is not none -%}
        {%- set record = tested_batch_record(staged) -%}
        {%- set landed_cut = landed_after(record.get('own', record['after']), record['column']) -%}
    {%- endif -%}
    with landed as (

        select
            kafka_topic,
            kafka_partition,
            kafka_offset,
            landing_seq,
            count(*) as landed_records
        from {{ model }} as raw_records
        {# set aside after it made a build fail: a reject of int_raw_records_unioned, never staged #}
        left anti join {{ source('cdc_raw', 'cdc_set_aside_records') }} as set_aside
            on
                raw_records.kafka_topic = set_aside.kafka_topic
                and raw_records.kafka_partition = set_aside.kafka_partition
                and raw_records.kafka_offset = set_aside.kafka_offset
                and raw_records.landing_seq = set_aside.landing_seq
        where
            {{ landed_cut or 'true' }}
            and landing_seq <= (select max(landing_seq) from {{ staged }})
        group by kafka_topic, kafka_partition, kafka_offset, landing_seq

    ),

    staged_records as (

        select
            kafka_topic,
            kafka_partition,
            kafka_offset,
            landing_seq,
            count(*) as staged_records
        from {{ staged }}
        where message_in_record = 0 and {{ staged_cut or 'true' }}
        group by kafka_topic, kafka_partition, kafka_offset, landing_seq

    )

    select
        kafka_topic,
        kafka_partition,
        kafka_offset,
        landing_seq,
        coalesce(landed.landed_records, 0) as landed_records,
        coalesce(staged_records.staged_records, 0) as staged_records
    from landed
    full outer join staged_records
        using (kafka_topic, kafka_partition, kafka_offset, landing_seq)
    where coalesce(landed.landed_records, 0) != coalesce(staged_records.staged_records, 0)
{% endtest %}
