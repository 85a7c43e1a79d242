-- The latest image of every source row, from the same staged changes cdc_lake reads: what a
-- dbt snapshot needs as its source. Deleted rows keep their last image with is_deleted = true.
-- The image is compared as sorted JSON text (a check snapshot cannot compare map columns).

with changes as (

    select *
    from {{ source('cdc_lake', 'int_changes_unioned') }}

),

ranked as (

    select
        *,
        row_number() over (
            partition by source_system, database_name, table_name, row_key
            order by change_order desc, change_id desc
        ) as recency
    from changes

),

final as (

    select
        -- one key column: dbt-spark's snapshot merge breaks on a list unique_key
        concat_ws('\u001f', source_system, database_name, table_name, row_key) as peer_row_id,
        source_system,
        database_name,
        table_name,
        row_key,
        to_json(array_sort(map_entries(case when op = 'd' then before else after end))) as image_text,
        op = 'd' as is_deleted,
        commit_ts
    from ranked
    where recency = 1

)

select * from final
