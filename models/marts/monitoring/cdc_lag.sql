with changes as (

    select
        source_format,
        source_system,
        database_name,
        table_name,
        commit_ts,
        {{ landing_time('landing_seq') }} as landed_at
    from {{ ref('cdc_changelog') }}
    where commit_ts is not null

),

table_lag as (

    select
        source_format,
        source_system,
        database_name,
        table_name,
        count(*) as changes,
        max(commit_ts) as last_commit_ts,
        max(landed_at) as last_landed_at,
        -- whole seconds (bigint): a lag reads as 55471947, not as the double 5.5471947E7
        percentile_approx(unix_seconds(landed_at) - unix_seconds(commit_ts), 0.5) as median_lag_seconds,
        percentile_approx(unix_seconds(landed_at) - unix_seconds(commit_ts), 0.95) as p95_lag_seconds,
        max(unix_seconds(landed_at) - unix_seconds(commit_ts)) as max_lag_seconds
    from changes
    group by source_format, source_system, database_name, table_name

),

heartbeats as (

    select
        *,
        {{ landing_time('landing_seq') }} as landed_at
    from {{ ref('int_heartbeats_unioned') }}

),

latest_per_partition as (

    select
        *,
        row_number() over (
            partition by source_format, source_system, kafka_topic, kafka_partition
            order by heartbeat_ts desc, landed_at asc
        ) as heartbeat_rank
    from heartbeats

),

-- a stream is as current as its slowest partition: the smallest of the partitions' latest heartbeats
slowest_partition as (

    select
        *,
        row_number() over (
            partition by source_format, source_system
            order by heartbeat_ts asc, landed_at desc
        ) as partition_rank
    from latest_per_partition
    where heartbeat_rank = 1

),

stream_heartbeat as (

    select
        source_format,
        source_system,
        heartbeat_ts as last_heartbeat_ts,
        landed_at as heartbeat_landed_at,
        unix_seconds(landed_at) - unix_seconds(heartbeat_ts) as heartbeat_lag_seconds
    from slowest_partition
    where partition_rank = 1

),

final as (

    select
        table_lag.source_format,
        table_lag.source_system,
        table_lag.database_name,
        table_lag.table_name,
        table_lag.changes,
        table_lag.last_commit_ts,
        table_lag.last_landed_at,
        table_lag.median_lag_seconds,
        table_lag.p95_lag_seconds,
        table_lag.max_lag_seconds,
        stream_heartbeat.last_heartbeat_ts,
        stream_heartbeat.heartbeat_landed_at,
        stream_heartbeat.heartbeat_lag_seconds,
        greatest(table_lag.last_commit_ts, stream_heartbeat.last_heartbeat_ts) as current_as_of
    from table_lag
    left join stream_heartbeat
        on
            table_lag.source_format = stream_heartbeat.source_format
            and table_lag.source_system = stream_heartbeat.source_system

)

select * from final
