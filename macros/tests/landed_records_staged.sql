{% test landed_records_staged(model, staged) %}
    {#- The reconciliation of one format, record by record: every raw record of `model` (a raw
        table) that the builds have read is staged in `staged` (its base model) exactly once, as
        one row with message_in_record 0, and every staged record is a raw record of the same
        landing. Compared on Kafka coordinates and landing_seq, as counts, so a record staged
        twice fails as well as one never staged. Raw records landed after the base model's
        highest landing_seq await the next build and are not compared. When the base model
        recorded its last batch (record_tested_batch; a scheduled build), both sides are cut to
        it: the staged rows by tested_batch, the raw records by the batch's cursor alone (a
        landing the build staged nothing of lies below the batch's least staged landing_seq,
        and must still fail). Else, and with var `cdc_check_all`, every record. A cycle of
        `cdc-lake build --tests-every` reconciles its own batch alone (`own_batch`): the other
        data tests it defers read every pending batch at the next build that runs them. A record
        set aside (cdc_set_aside_records) is not staged: it is left out of the landed side. -#}
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
