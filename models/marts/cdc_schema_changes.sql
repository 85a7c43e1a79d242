{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='schema_change_id',
        merge_insert_only=true,
    )
}}

-- DDL statements from every format that carries them, one row per statement; re-deliveries
-- collapse on schema_change_id.

with new_schema_changes as (

    select *
    from {{ ref('int_schema_changes_unioned') }}
    where {{ landed_since_last_build(ref('int_schema_changes_unioned'), landing_watermarks()) }}

),

deduplicated as (

    select *
    from (
        select
            *,
            row_number() over (
                partition by schema_change_id
                order by landing_seq, kafka_topic, kafka_partition, kafka_offset
            ) as delivery_number
        from new_schema_changes
    ) as deliveries
    where delivery_number = 1

),

final as (

    select
        schema_change_id,
        source_format,
        source_system,
        database_name,
        table_name,
        ddl_type,
        ddl_statement,
        commit_ts,
        change_order,
        source_position,
        gtid,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        landing_seq
    from deduplicated

)

select * from final
