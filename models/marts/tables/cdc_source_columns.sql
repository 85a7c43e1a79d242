{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key=['database_name', 'table_name', 'column_name'],
    )
}}

-- Every column of every source table as the change log has shown it: its latest MySQL type and
-- when it was first and last seen. Incremental: reads only change-log rows landed since the last
-- build, reduced to their distinct column sets first (a table's changes share a handful), then
-- merged with the stored rows of the columns they touch.

with new_changes as (

    select *
    from {{ ref('cdc_changelog') }}
    where landing_seq > {{ landing_watermark('last_landing_seq') }}

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

    select
        shapes.database_name,
        shapes.table_name,
        c.column_name,
        c.column_position,
        from_json(shapes.column_types_json, 'map<string,string>')[c.column_name] as mysql_type,
        array_contains(shapes.key_columns, c.column_name) as is_primary_key,
        shapes.first_seen_ts,
        shapes.last_seen_ts,
        shapes.last_landing_seq
    from shapes
        lateral view posexplode(array_distinct(concat(
            shapes.image_columns,
            map_keys(coalesce(from_json(shapes.column_types_json, 'map<string,string>'), map()))
        ))) c as column_position, column_name

),

batch_columns as (

    select
        database_name,
        table_name,
        column_name,
        max_by(mysql_type, case when mysql_type is not null then last_seen_ts end) as mysql_type,
        max(case when mysql_type is not null then last_seen_ts end) as mysql_type_seen_ts,
        max_by(is_primary_key, last_seen_ts) as is_primary_key,
        min_by(column_position, first_seen_ts) as first_position,
        min(first_seen_ts) as first_seen_ts,
        max(last_seen_ts) as last_seen_ts,
        max(last_landing_seq) as last_landing_seq
    from observed
    group by 1, 2, 3

),

{% if is_incremental() %}

    combined as (

        select * from batch_columns

        union all

        select
            existing.database_name,
            existing.table_name,
            existing.column_name,
            existing.mysql_type,
            existing.mysql_type_seen_ts,
            existing.is_primary_key,
            existing.first_position,
            existing.first_seen_ts,
            existing.last_seen_ts,
            existing.last_landing_seq
        from {{ this }} as existing
        left semi join batch_columns
            on
                existing.database_name = batch_columns.database_name
                and existing.table_name = batch_columns.table_name
                and existing.column_name = batch_columns.column_name

    ),

{% else %}

    combined as (

        select * from batch_columns

    ),

{% endif %}

final as (

    select
        database_name,
        table_name,
        column_name,
        max_by(mysql_type, mysql_type_seen_ts) as mysql_type,
        max(mysql_type_seen_ts) as mysql_type_seen_ts,
        max_by(is_primary_key, last_seen_ts) as is_primary_key,
        min_by(first_position, first_seen_ts) as first_position,
        min(first_seen_ts) as first_seen_ts,
        max(last_seen_ts) as last_seen_ts,
        max(last_landing_seq) as last_landing_seq
    from combined
    group by 1, 2, 3

)

select * from final
