-- The last `cdc-lake verify` of every source table: did the lake hold what the source database
-- held? A view over the results the command appends (source `verification_results`), one row per
-- table, its latest run; empty until the first run.

with results as (

    select * from {{ source('cdc_raw', 'verification_results') }}

),

latest as (

    select
        *,
        row_number() over (
            partition by source_system, database_name, table_name
            order by verified_at desc, verification_id desc
        ) as recency
    from results

),

final as (

    select
        source_system,
        database_name,
        table_name,
        status,
        source_rows,
        lake_rows,
        differing_keys,
        differences,
        source_position,
        lake_position,
        changes_in_flight,
        verified_at,
        verification_id,
        source,
        seconds
    from latest
    where recency = 1

)

select * from final
