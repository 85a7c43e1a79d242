-- All formats' row changes in the canonical shape, before deduplication. Explicit column lists:
-- every staging model produces exactly these columns. The project's table filter (vars
-- `cdc_include_tables` / `cdc_exclude_tables`, macro `cdc_table_included`) is applied here, once
-- for every format; int_raw_records_unioned accounts the records it drops as `filtered`.

{%- set columns = [
    'change_id', 'source_format', 'source_system', 'database_name', 'table_name', 'op',
    'key_columns', 'row_key', 'primary_key', 'before', 'after', 'column_types', 'commit_ts',
    'capture_ts', 'change_order', 'source_position', 'gtid', 'kafka_topic', 'kafka_partition',
    'kafka_offset', 'row_in_message', 'landing_seq',
] %}

with canal_flat as (

    select {{ columns | join(', ') }}
    from {{ ref('stg_canal_flat__changes') }}

),

kafka_river_canal as (

    select {{ columns | join(', ') }}
    from {{ ref('stg_kafka_river_canal__changes') }}

),

tencent_dts as (

    select {{ columns | join(', ') }}
    from {{ ref('stg_tencent_dts__changes') }}

),

debezium as (

    select {{ columns | join(', ') }}
    from {{ ref('stg_debezium__changes') }}

),

lindorm as (

    select {{ columns | join(', ') }}
    from {{ ref('stg_lindorm__changes') }}

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

final as (

    select *
    from unioned
    where {{ cdc_table_included('database_name', 'table_name') }}

)

select * from final
