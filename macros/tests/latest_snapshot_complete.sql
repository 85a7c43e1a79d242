{% test latest_snapshot_complete(model) %}
    with latest as (
        select
            *,
            row_number() over (
                partition by source_system, database_name, table_name
                order by last_read_order desc, snapshot_id
            ) as recency
        from {{ model }}
        where not is_incremental_snapshot
    )

    select source_system, database_name, table_name, snapshot_position, rows_read, outcome
    from latest
    where recency = 1 and not is_complete
{% endtest %}
