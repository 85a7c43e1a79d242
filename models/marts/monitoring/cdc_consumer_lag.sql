-- How far the landing is behind the broker, per Kafka topic-partition: the broker's latest offset
-- as `cdc-lake consume` last saw it, against the highest offset landed. Rows only for partitions
-- the consumer reads (kcat-landed topics have no broker offsets to compare with). A view: as of now.

with end_offsets as (

    select
        kafka_topic,
        kafka_partition,
        latest_offset,
        observed_at
    from {{ source('cdc_raw', 'kafka_end_offsets') }}

),

landed as (

    {% for fmt in cdc_formats() %}
        select
            '{{ fmt }}' as source_format,
            kafka_topic,
            kafka_partition,
            max(kafka_offset) as last_landed_offset,
            max_by(kafka_timestamp, kafka_offset) as last_landed_record_ts,
            max({{ landing_time('landing_seq') }}) as last_landed_at
        from {{ source('cdc_raw', 'raw_' ~ fmt) }}
        group by kafka_topic, kafka_partition
        {% if not loop.last %}union all{% endif %}
    {% endfor %}

),

final as (

    select
        landed.source_format,
        end_offsets.kafka_topic,
        end_offsets.kafka_partition,
        end_offsets.latest_offset,
        landed.last_landed_offset,
        -- offsets not landed yet (Kafka's consumer lag); transaction markers count as offsets too
        greatest(end_offsets.latest_offset - coalesce(landed.last_landed_offset + 1, 0), 0) as records_behind,
        landed.last_landed_record_ts,
        -- the oldest unlanded record is younger than the last landed one: an upper bound of its age
        case
            when end_offsets.latest_offset > coalesce(landed.last_landed_offset + 1, 0)
                then
                    cast(
                        unix_seconds(end_offsets.observed_at)
                        - unix_seconds(coalesce(landed.last_landed_record_ts, end_offsets.observed_at))
                        as bigint
                    )
            else 0
        end as oldest_unlanded_age_seconds_max,
        landed.last_landed_at,
        end_offsets.observed_at
    from end_offsets
    left join landed
        on
            end_offsets.kafka_topic = landed.kafka_topic
            and end_offsets.kafka_partition = landed.kafka_partition

)

select * from final
