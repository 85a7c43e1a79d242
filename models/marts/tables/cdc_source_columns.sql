{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key=['database_name', 'table_name', 'column_name'],
        on_schema_change='append_new_columns',
    )
}}

{#- the order in which a column's types compete: rank, then time; rows without a type never win -#}
{%- set type_order = "case when mysql_type is not null then named_struct('rank', mysql_type_rank, 'ts', @ts) end" %}

with new_changes as (

    select *
    from {{ ref('cdc_changelog') }}
    where {{ landed_since_last_build(ref('cdc_changelog'), landing_watermark('last_landing_seq')) }}

),

shapes as (

    select
        database_name,
        table_name,
        to_json(column_types) as column_types_json,
        map_keys(coalesce(after, before)) as image_columns,
        map_keys(primary_key) as key_columns,
        min(commit_ts) as first_seen_ts,
        max(commit_ts) as last_seen_ts,
        max(landing_seq) as last_landing_seq
    from new_changes
    group by 1, 2, 3, 4, 5

),

observed as (

    -- one row per column of each shape, in the stored table's columns
    select
        shapes.database_name,
        shapes.table_name,
        c.column_name,
        from_json(shapes.column_types_json, 'map<string,string>')[c.column_name] as mysql_type,
        {{ mysql_type_rank("from_json(shapes.column_types_json, 'map<string,string>')[c.column_name]") }}
            as mysql_type_rank,
        shapes.last_seen_ts as mysql_type_seen_ts,
        array_contains(shapes.key_columns, c.column_name) as is_primary_key,
        c.column_position as first_position,
        shapes.first_seen_ts,
        shapes.last_seen_ts,
        shapes.last_landing_seq
    from shapes
        lateral view posexplode(array_distinct(concat(
            shapes.image_columns,
            map_keys(coalesce(from_json(shapes.column_types_json, 'map<string,string>'), map()))
        ))) c as column_position, column_name

),

combined as (

    select * from observed
    {%- if is_incremental() %}

        union all

        -- the stored rows of the columns the batch touches, folded in by the same aggregation
        select
            existing.database_name,
            existing.table_name,
            existing.column_name,
            existing.mysql_type,
            -- rows stored before the rank existed count as declared types
            coalesce(existing.mysql_type_rank, 2) as mysql_type_rank,
            existing.mysql_type_seen_ts,
            existing.is_primary_key,
            existing.first_position,
            existing.first_seen_ts,
            existing.last_seen_ts,
            existing.last_landing_seq
        from {{ this }} as existing
        left semi join observed
            on
                existing.database_name = observed.database_name
                and existing.table_name = observed.table_name
                and existing.column_name = observed.column_name
    {%- endif %}

),

final as (

    select
        database_name,
        table_name,
        column_name,
        max_by(mysql_type, {{ type_order | replace('@ts', 'mysql_type_seen_ts') }}) as mysql_type,
        max(case when mysql_type is not null then mysql_type_rank end) as mysql_type_rank,
        max_by(mysql_type_seen_ts, {{ type_order | replace('@ts', 'mysql_type_seen_ts') }}) as mysql_type_seen_ts,
        max_by(is_primary_key, last_seen_ts) as is_primary_key,
        min_by(first_position, first_seen_ts) as first_position,
        min(first_seen_ts) as first_seen_ts,
        max(last_seen_ts) as last_seen_ts,
        max(last_landing_seq) as last_landing_seq
    from combined
    group by 1, 2, 3

)

select * from final
