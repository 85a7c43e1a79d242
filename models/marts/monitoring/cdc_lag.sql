-- How far behind the source the lake is, per table: delay from commit at the source to landing,
-- over the changes in the change log.

with changes as (

    select
        source_format,
        source_system,
        database_name,
        table_name,
        commit_ts,
        timestamp_micros(landing_seq) as landed_at
    from {{ ref('cdc_changelog') }}
    where commit_ts is not null

),

final as (

    select
        source_format,
        source_system,
        database_name,
        table_name,
        count(*) as changes,
        max(commit_ts) as last_commit_ts,
        max(landed_at) as last_landed_at,
        percentile_approx(
            unix_micros(landed_at) - unix_micros(commit_ts), 0.5
        ) / 1e6 as median_lag_seconds,
        percentile_approx(
            unix_micros(landed_at) - unix_micros(commit_ts), 0.95
        ) / 1e6 as p95_lag_seconds,
        max(unix_micros(landed_at) - unix_micros(commit_ts)) / 1e6 as max_lag_seconds
    from changes
    group by source_format, source_system, database_name, table_name

)

select * from final
