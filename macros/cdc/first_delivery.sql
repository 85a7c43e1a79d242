{% macro first_delivery(relation, id_column) %}
    {#- The rows of `relation` that are the first delivery of their `id_column`: a change (or DDL)
        that Kafka delivered, or a landing loaded, more than once keeps the copy landed first
        (then the lowest Kafka coordinates), so duplicates collapse whatever their order. -#}
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
