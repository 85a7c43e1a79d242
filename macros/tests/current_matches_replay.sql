{% test current_matches_replay(model, changelog, schema_changes, snapshots, key_columns) %}
    {%- set keys = key_columns | join(', ') -%}
    with last_resets as (
        select source_system, database_name, table_name, max(reset_order) as reset_order
        from (
            select source_system, database_name, table_name, change_order as reset_order
            from {{ schema_changes }}
            where {{ is_table_reset() }}
            union all
            -- a complete snapshot ends, as a reset does, every key of its table that it did not
            -- read: a key it read has that read ordered after the snapshot's position
            select source_system, database_name, table_name, snapshot_order as reset_order
            from {{ snapshots }}
            where rebaselines
        ) as resets
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
