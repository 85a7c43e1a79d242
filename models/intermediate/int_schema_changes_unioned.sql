-- DDL statements of every format that carries them, in one shape.

with canal_flat as (

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
    from {{ ref('stg_canal_flat__schema_changes') }}

),

unioned as (

    select * from canal_flat

)

select * from unioned
