-- Every parsed raw record of every format with what it turned out to be (dml, ddl, control,
-- rejected, or filtered: a dml, ddl or malformed record of a table the project's table filter
-- excludes, see macro `cdc_table_included`): the base of the quarantine and of the reconciliation.

with canal_flat as (

    select
        'canal_flat' as source_format,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        message_in_record,
        landing_seq,
        landed_at,
        msg.database as database_name,
        msg.`table` as table_name,
        record_kind,
        reject_reason,
        rejected_value
    from {{ ref('base_canal_flat__messages') }}

),

kafka_river_canal as (

    select
        'kafka_river_canal' as source_format,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        message_in_record,
        landing_seq,
        landed_at,
        database_name,
        table_name,
        record_kind,
        reject_reason,
        rejected_value
    from {{ ref('base_kafka_river_canal__messages') }}

),

tencent_dts as (

    select
        'tencent_dts' as source_format,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        message_in_record,
        landing_seq,
        landed_at,
        database_name,
        table_name,
        record_kind,
        reject_reason,
        rejected_value
    from {{ ref('base_tencent_dts__messages') }}

),

debezium as (

    select
        'debezium' as source_format,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        message_in_record,
        landing_seq,
        landed_at,
        database_name,
        table_name,
        record_kind,
        reject_reason,
        rejected_value
    from {{ ref('base_debezium__messages') }}

),

lindorm as (

    select
        'lindorm' as source_format,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        message_in_record,
        landing_seq,
        landed_at,
        database_name,
        table_name,
        record_kind,
        reject_reason,
        rejected_value
    from {{ ref('base_lindorm__messages') }}

),

unioned as (

    select * from canal_flat
    union all
    select * from kafka_river_canal
    union all
    select * from tencent_dts
    union all
    select * from debezium
    union all
    select * from lindorm

),

classified as (

    select
        *,
        -- a table the filter excludes is filtered whatever its records hold: a malformed record
        -- of an excluded table is not the user's concern. One without a table name cannot be
        -- matched and keeps its kind (rejected, or a control record).
        record_kind in ('dml', 'ddl', 'rejected')
        and (record_kind != 'rejected' or table_name is not null)
        and not {{ cdc_table_included('database_name', 'table_name') }} as is_filtered
    from unioned

),

final as (

    select
        source_format,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        message_in_record,
        landing_seq,
        landed_at,
        database_name,
        table_name,
        case when is_filtered then 'filtered' else record_kind end as record_kind,
        case when not is_filtered then reject_reason end as reject_reason,
        case when not is_filtered then rejected_value end as rejected_value
    from classified

)

select * from final
