{% test current_matches_replay(model, changelog, schema_changes, key_columns) %}
    {#- cdc_current must equal a replay of the whole change log: for each key the change with the
        highest change_order decides the image (the before image for a delete) and is_deleted,
        unless a later TRUNCATE / DROP TABLE of its table (schema_changes, is_table_reset) deleted
        it; a keyless row's row_count is the number of its inserts less its deletes since the
        table's last reset.
        Delete markers past `cdc_delete_retention_days` (if set) are left out on both sides. -#}
    {%- set keys = key_columns | join(', ') -%}
    {%- set retention_days = var('cdc_delete_retention_days', none) -%}
    {%- set kept = "true" if retention_days is none
        else "not (is_deleted and " ~ delete_marker_expired('commit_ts', retention_days) ~ ")" -%}
    with last_resets as (
        select
            source_system, database_name, table_name,
            max(change_order) as reset_order,
            max_by(commit_ts, change_order) as reset_ts
        from {{ schema_changes }}
        where {{ is_table_reset('ddl_type') }}
        group by source_system, database_name, table_name
    ),

    ranked as (
        select
            changes.*,
            coalesce(changes.change_order < last_resets.reset_order, false) as before_reset,
            last_resets.reset_ts,
            row_number() over (
                partition by {{ qualified_columns('changes', key_columns) }}
                order by changes.change_order desc, changes.change_id desc
            ) as recency,
            sum(if(changes.change_order < last_resets.reset_order, 0, {{ keyless_row_delta('changes') }}))
                over (partition by {{ qualified_columns('changes', key_columns) }}) as net_row_count
        from {{ changelog }} as changes
        left join last_resets
            on {{ join_on_keys('changes', 'last_resets', ['source_system', 'database_name', 'table_name']) }}
    ),

    replayed as (
        select {{ keys }}, is_deleted, row_count, image_text
        from (
            select
                {{ keys }},
                if(before_reset, reset_ts, commit_ts) as commit_ts,
                before_reset or if(is_keyless, net_row_count <= 0, op = 'd') as is_deleted,
                case when before_reset then 0 when is_keyless then net_row_count when op = 'd' then 0 else 1 end
                    as row_count,
                to_json(array_sort(map_entries(case when op = 'd' then before else after end))) as image_text
            from ranked
            where recency = 1
        ) as latest
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
