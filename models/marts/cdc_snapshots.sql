{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='snapshot_id',
    )
}}

{%- set watermark = landing_watermarks('last_landing_seq') %}
{%- set formats = cdc_formats(carrying='snapshot_markers') %}
{#- a snapshot read of a format that marks its snapshots; Debezium's are op r, so Iceberg skips
    the row groups without one by their dictionary of op -#}
{%- set is_marked_read -%}
    source_format in ('{{ formats | join("', '") }}')
    and op = 'r'
    and {{ is_snapshot_read('source_position') }}
{%- endset %}
{%- set marked_reads = '(select source_format, landing_seq from ' ~ ref('cdc_changelog')
    ~ ' where ' ~ is_marked_read ~ ') as marked_reads' %}
{%- set run = ['source_format', 'source_system', 'snapshot_position'] %}
{%- set snapshot_table = run + ['database_name', 'table_name'] %}

with new_reads as (

    select
        source_format,
        source_system,
        database_name,
        table_name,
        {{ snapshot_position('source_position') }} as snapshot_position,
        {{ snapshot_order('source_position', 'change_order') }} as snapshot_order,
        {{ snapshot_marker('source_position') }} as marker,
        change_order,
        commit_ts,
        landing_seq
    from {{ ref('cdc_changelog') }}
    where
        {{ is_marked_read }}
        and {{ landed_since_last_build(marked_reads, watermark) }}

),

batch_tables as (

    -- what the batch read of each table in each snapshot; a snapshot is its rows at one source
    -- position (Debezium gives every row of a snapshot the binlog position it was taken at)
    select
        {{ snapshot_table | join(',\n        ') }},
        max(snapshot_order) as snapshot_order,
        count(*) as rows_read,
        min(commit_ts) as snapshot_ts,
        max(change_order) as last_read_order,
        bool_or(marker = 'incremental') as is_incremental_snapshot,
        min(landing_seq) as first_landing_seq,
        -- the end of this table's read (Debezium 2's last_in_data_collection, or the snapshot's
        -- last record when this table was read last) and of the whole snapshot (last)
        min(if(marker in ('last_in_data_collection', 'last'), landing_seq, null)) as table_end_landing_seq,
        min(if(marker = 'last', landing_seq, null)) as snapshot_end_landing_seq,
        max(landing_seq) as last_landing_seq
    from new_reads
    group by {{ snapshot_table | join(', ') }}

),

snapshot_tables as (

    select * from batch_tables
    {%- if is_incremental() %}

        union all

        -- the built tables of the snapshots the batch read more of: the end of a snapshot may
        -- come with another table's rows, and completes them all
        select
            {{ qualified_columns('existing', snapshot_table) }},
            existing.snapshot_order,
            existing.rows_read,
            existing.snapshot_ts,
            existing.last_read_order,
            existing.is_incremental_snapshot,
            existing.first_landing_seq,
            existing.table_end_landing_seq,
            existing.snapshot_end_landing_seq,
            existing.last_landing_seq
        from {{ this }} as existing
        left semi join batch_tables
            on {{ join_on_keys('existing', 'batch_tables', run) }}
    {%- endif %}

),

combined as (

    select
        {{ snapshot_table | join(',\n        ') }},
        max(snapshot_order) as snapshot_order,
        sum(rows_read) as rows_read,
        min(snapshot_ts) as snapshot_ts,
        max(last_read_order) as last_read_order,
        bool_or(is_incremental_snapshot) as is_incremental_snapshot,
        min(first_landing_seq) as first_landing_seq,
        min(table_end_landing_seq) as table_end_landing_seq,
        -- the end of the whole snapshot, on one table's rows, completes every table of it
        min(min(snapshot_end_landing_seq)) over (partition by {{ run | join(', ') }}) as snapshot_end_landing_seq,
        max(last_landing_seq) as last_landing_seq
    from snapshot_tables
    group by {{ snapshot_table | join(', ') }}

),

judged as (

    select
        *,
        not is_incremental_snapshot
        and coalesce(table_end_landing_seq, snapshot_end_landing_seq) is not null as is_complete
    from combined

),

final as (

    select
        {{ change_id(snapshot_table) }} as snapshot_id,
        {{ snapshot_table | join(',\n        ') }},
        snapshot_order,
        snapshot_ts,
        last_read_order,
        rows_read,
        is_incremental_snapshot,
        is_complete,
        is_complete and snapshot_order is not null as rebaselines,
        case
            when is_complete and snapshot_order is not null
                then 'complete: the live keys it did not read are closed at its position (op a)'
            when is_complete
                then 'complete, not placed: its position cannot be ordered against the stream; closes nothing'
            when is_incremental_snapshot
                then 'incremental snapshot: its rows are reads; closes nothing'
            else 'incomplete: no last record (not landed yet, or the connector stopped inside it); closes nothing'
        end as outcome,
        first_landing_seq,
        table_end_landing_seq,
        snapshot_end_landing_seq,
        -- the batch from which the lake knows the table's read is complete: its end and its rows landed
        case
            when is_complete and snapshot_order is not null
                then greatest(first_landing_seq, least(table_end_landing_seq, snapshot_end_landing_seq))
        end as completed_landing_seq,
        last_landing_seq
    from judged

)

select * from final
