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

{#- option schema_changes fail (cdc_table_options): the records whose changes cdc_changelog held -#}
{%- set options = cdc_table_options() %}
{%- set held_window = schema_changelog_batch() if options.holds_schema_changes else none %}

with new_rejects as (

    select *
    from {{ ref('int_raw_records_unioned') }}
    where
        record_kind = 'rejected'
        -- no batch marker: most landings hold no reject, and the write's own probe of this plain
        -- filter is cheap and keeps such runs from making empty snapshots
        and {{ landed_after(landing_watermarks()) }}

),
{%- if options.holds_schema_changes %}

held_batch as (

    -- the changes of tables in mode fail in the change log's last batch, screened again by the
    -- same rules against the change log as it now is (what it holds is accepted)
    select *
    from {{ ref('int_changes_unioned') }}
    where
        {{ schema_change_mode(options) | indent(8) }} = 'fail'
        and {{ held_window['changes'] }}

),

{{ schema_change_screen('held_batch', ref('cdc_changelog')) }},

held as (

    -- one reject per record, with the record's value as landed
    select
        records.source_format,
        records.kafka_topic,
        records.kafka_partition,
        records.kafka_offset,
        0 as message_in_record,
        raw.kafka_value as rejected_value,
        records.reject_reason,
        {{ landing_time('records.landing_seq') }} as landed_at,
        records.landing_seq
    from (
        select
            source_format,
            kafka_topic,
            kafka_partition,
            kafka_offset,
            landing_seq,
            min_by(hold_reason, change_order) as reject_reason
        from schema_screened
        where is_held
        group by source_format, kafka_topic, kafka_partition, kafka_offset, landing_seq
    ) as records
        left join (
            {%- for fmt in cdc_formats() %}
            select
                '{{ fmt }}' as source_format,
                kafka_topic,
                kafka_partition,
                kafka_offset,
                landing_seq,
                kafka_value
            from {{ source('cdc_raw', 'raw_' ~ fmt) }}
            where {{ held_window['raw'][fmt] }}
            {%- if not loop.last %}
            union all
            {%- endif %}
            {%- endfor %}
        ) as raw
            on
                records.source_format = raw.source_format
                and records.kafka_topic = raw.kafka_topic
                and records.kafka_partition = raw.kafka_partition
                and records.kafka_offset = raw.kafka_offset
                and records.landing_seq = raw.landing_seq

),
{%- endif %}

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
    {%- if options.holds_schema_changes %}

    union all

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
    from held
    {%- endif %}

)

select * from final
