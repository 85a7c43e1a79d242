-- DDL statements of every format that carries them, in one shape, after the project's table
-- filter (macro `cdc_table_included`; filtered DDL is accounted in int_raw_records_unioned).

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

tencent_dts as (

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
    from {{ ref('stg_tencent_dts__schema_changes') }}

),

debezium as (

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
    from {{ ref('stg_debezium__schema_changes') }}

),

unioned as (

    select * from canal_flat
    union all
    select * from tencent_dts
    union all
    select * from debezium

),

final as (

    select *
    from unioned
    where {{ cdc_table_included('database_name', 'table_name') }}

)

select * from final
