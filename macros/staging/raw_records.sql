{% macro raw_records_since_last_build(fmt) %}
    {#- The head of every base_<format>__messages model: the raw records of `fmt` landed since the
        model's last build (landed_since_last_build on its landing watermark), every column. The
        model records that batch (plan_tested_batch), so that a scheduled build's tests of it and
        of the staging views over it read the records it staged, not every record ever landed. -#}
    {%- set raw = source('cdc_raw', 'raw_' ~ fmt) -%}
    {%- set watermark = landing_watermark() -%}
    {%- set batch_filter = landed_since_last_build(raw, watermark) -%}
    {%- do plan_tested_batch(watermark) -%}
    select *
    from {{ raw }}
    where {{ batch_filter }}
{%- endmacro %}


{% macro raw_record_outcome(accepted_kind, message_in_record='0') %}
    {#- The tail of every base_<format>__messages model: a classified record's Kafka coordinates
        and what became of it. `reject_reason` is the record's reason, or 'tombstone' for a null
        value, or null when it was accepted; `accepted_kind` is the SQL giving the kind of an
        accepted record ('dml', 'ddl' or 'control'). A tombstone is a control record with no reason;
        a rejected record keeps its raw text (rejected_value), the only place it is kept. -#}
    kafka_topic,
    kafka_partition,
    kafka_offset,
    kafka_timestamp,
    landed_at,
    landing_seq,
    {{ message_in_record }} as message_in_record,
    case
        when reject_reason = 'tombstone' then 'control'
        when reject_reason is not null then 'rejected'
        else {{ accepted_kind }}
    end as record_kind,
    case when reject_reason != 'tombstone' then reject_reason end as reject_reason,
    case when reject_reason != 'tombstone' then kafka_value end as rejected_value
{%- endmacro %}
