-- The Kafka coordinates of every landed record of every format (macro cdc_formats), read straight
-- from the raw tables: the independent count that the reconciliation checks the pipeline against.

with unioned as (

    {% for fmt in cdc_formats() %}
        select
            '{{ fmt }}' as source_format,
            kafka_topic,
            kafka_partition,
            kafka_offset,
            coalesce(kafka_topic_incarnation, 0) as kafka_topic_incarnation,
            landed_at,
            landing_seq
        from {{ source('cdc_raw', 'raw_' ~ fmt) }}
        {% if not loop.last %}union all{% endif %}
    {% endfor %}

)

select * from unioned
