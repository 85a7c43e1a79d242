{% macro first_delivery(relation, id_column) %}
    select *
    from (
        select
            *,
            row_number() over (
                partition by {{ id_column }}
                order by landing_seq, kafka_topic, kafka_partition, kafka_offset
            ) as delivery_number
        from {{ relation }}
    ) as deliveries
    where delivery_number = 1
{% endmacro %}
