-- All formats' row changes in the canonical shape, before deduplication. Explicit column lists:
-- every staging model produces exactly these columns.

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

unioned as (

    select * from canal_flat

)

select * from unioned
