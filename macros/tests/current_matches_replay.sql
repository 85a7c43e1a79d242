{% test current_matches_replay(model, changelog, schema_changes, key_columns) %}
    {#- The live rows of cdc_current must equal a replay of the whole change log, written apart
        from cdc_history's incremental logic: for each key the change with the highest change_order
        decides the image and whether the row is live, unless a later TRUNCATE / DROP TABLE of its
        table (schema_changes, is_table_reset) ended it; a keyless row is live with the number of its
        inserts less its deletes since the table's last reset, when that is above zero. A value the
        deciding change left unavailable (unavailable_columns: an unchanged PostgreSQL TOAST value)
        is the last value of that column any change of the key carried, null if none did. A row live
        on one side only, or with another image or row_count, is a failure (delete markers are
        cdc_history's closed versions, checked by its own tests). Under a `where` of the cdc
        placeholders (spark__get_where_subquery), the change log is cut like the model, to the same
        keys (tested_keys): a scheduled build replays the keys its batch touched. -#}
    {%- set keys = key_columns | join(', ') -%}
    with last_resets as (
        select source_system, database_name, table_name, max(change_order) as reset_order
        from {{ schema_changes }}
        where {{ is_table_reset() }}
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

    unavailable_keys as (
        select {{ keys }} from ranked
        where recency = 1 and size(coalesce(unavailable_columns, array())) > 0
    ),

    carried_values as (
        -- the last value of each column that a change of such a key carried
        select
            {{ qualified_columns('changes', key_columns) }},
            carried.column_name,
            max_by(carried.column_value, struct(changes.change_order, changes.change_id)) as column_value
        from {{ get_where_subquery(changelog) }} as changes
        left semi join unavailable_keys
            on {{ join_on_keys('changes', 'unavailable_keys', key_columns) }}
            lateral view explode(coalesce(if(changes.op = 'd', changes.before, changes.after), map())) carried
                as column_name, column_value
        where not array_contains(coalesce(changes.unavailable_columns, array()), carried.column_name)
        group by {{ qualified_columns('changes', key_columns) }}, carried.column_name
    ),

    last_carried as (
        select {{ keys }}, map_from_entries(collect_list(struct(column_name, column_value))) as carried
        from carried_values
        group by {{ keys }}
    ),

    replayed as (
        select
            {{ qualified_columns('ranked', key_columns) }},
            if(ranked.is_keyless, ranked.net_row_count, 1) as row_count,
            to_json(array_sort(map_entries(transform_values(
                coalesce(ranked.after, ranked.before),
                (rp_k, rp_v) -> if(
                    array_contains(coalesce(ranked.unavailable_columns, array()), rp_k), last_carried.carried[rp_k], rp_v
                )
            )))) as image_text
        from ranked
        left join last_carried
            on {{ join_on_keys('ranked', 'last_carried', key_columns) }}
        where
            ranked.recency = 1
            and not ranked.before_reset
            and if(ranked.is_keyless, ranked.net_row_count > 0, ranked.op != 'd')
    ),

    stored as (
        select {{ keys }}, row_count, to_json(array_sort(map_entries(image))) as image_text
        from {{ model }}
        where not is_deleted
    ),

    missing as (
        select 'live in the replay, not in current' as problem, * from replayed
        except
        select 'live in the replay, not in current' as problem, * from stored
    ),

    extra as (
        select 'live in current, not in the replay' as problem, * from stored
        except
        select 'live in current, not in the replay' as problem, * from replayed
    )

    select * from missing
    union all
    select * from extra
{% endtest %}
