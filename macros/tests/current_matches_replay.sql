{% test current_matches_replay(model, changelog, schema_changes, key_columns) %}
    {#- cdc_current must equal a replay of the whole change log: for each key the change with the
        highest change_order decides the image (the before image for a delete) and is_deleted,
        unless a later TRUNCATE / DROP TABLE of its table (schema_changes, is_table_reset) deleted
        it (the first one after that change); a keyless row's row_count is the number of its inserts less its deletes since the
        table's last reset.
        Delete markers past `cdc_delete_retention_days` (if set) are left out on both sides.
        Under a `where` of the cdc placeholders (spark__get_where_subquery), the change log is cut
        like the model, to the same keys (tested_keys): a scheduled build replays the keys its
        batch touched. -#}
    {%- set keys = key_columns | join(', ') -%}
    {%- set retention_days = var('cdc_delete_retention_days', none) -%}
    {%- set kept = "true" if retention_days is none
        else "not (is_deleted and " ~ delete_marker_expired('commit_ts', retention_days) ~ ")" -%}
    with resets as (
        select source_system, database_name, table_name, change_order, commit_ts
        from {{ schema_changes }}
        where {{ is_table_reset() }}
    ),

    last_resets as (
        select source_system, database_name, table_name, max(change_order) as reset_order
        from resets
        group by source_system, database_name, table_name
    ),

    ranked as (
        select
            changes.*,
            coalesce(changes.change_order < last_resets.reset_order, false) as before_reset,
            row_number() over (
                partition by {{ qualified_columns('changes', key_columns) }}
                order by changes.change_order desc, changes.change_id desc
            ) as recency,
            sum(if(changes.change_order < last_resets.reset_order, 0, {{ keyless_row_delta('changes') }}))
                over (partition by {{ qualified_columns('changes', key_columns) }}) as net_row_count
        from {{ get_where_subquery(changelog) }} as changes
        left join last_resets
            on {{ join_on_keys('changes', 'last_resets', ['source_system', 'database_name', 'table_name']) }}
    ),

    latest as (
        select * from ranked
        where recency = 1
    ),

    deleting_resets as (
        -- the reset that deleted a row: the first one of its table after the row's newest change
        select
            {{ qualified_columns('latest', key_columns) }},
            min_by(resets.commit_ts, resets.change_order) as reset_ts
        from latest
        inner join resets
            on
                {{ join_on_keys('latest', 'resets', ['source_system', 'database_name', 'table_name']) }}
                and resets.change_order > latest.change_order
        group by {{ qualified_columns('latest', key_columns) }}
    ),

    replayed as (
        select {{ keys }}, is_deleted, row_count, image_text
        from (
            select
                {{ qualified_columns('latest', key_columns) }},
                if(latest.before_reset, deleting_resets.reset_ts, latest.commit_ts) as commit_ts,
                latest.before_reset or if(latest.is_keyless, latest.net_row_count <= 0, latest.op = 'd')
                    as is_deleted,
                case
                    when latest.before_reset then 0
                    when latest.is_keyless then latest.net_row_count
                    when latest.op = 'd' then 0
                    else 1
                end as row_count,
                to_json(array_sort(map_entries(
                    case when latest.op = 'd' then latest.before else latest.after end
                ))) as image_text
            from latest
            left join deleting_resets
                on {{ join_on_keys('latest', 'deleting_resets', key_columns) }}
        ) as replayed_rows
        where {{ kept }}
    ),

    stored as (
        select {{ keys }}, is_deleted, row_count, to_json(array_sort(map_entries(image))) as image_text
        from {{ model }}
        where {{ kept }}
    ),

    missing as (
        select 'replay differs from current' as problem, * from replayed
        except
        select 'replay differs from current' as problem, * from stored
    ),

    extra as (
        select 'current differs from replay' as problem, * from stored
        except
        select 'current differs from replay' as problem, * from replayed
    )

    select * from missing
    union all
    select * from extra
{% endtest %}
