{% test current_matches_replay(model, changelog, schema_changes, key_columns) %}
    {#- The live rows of cdc_current must equal a replay of the whole change log, written apart
        from cdc_history's incremental logic: for each key the change with the highest change_order
        decides the image and whether the row is live, unless a later TRUNCATE / DROP TABLE of its
        table (schema_changes, is_table_reset) ended it; a keyless row is live with the number of its
        inserts less its deletes since the table's last reset, when that is above zero. A row live
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

    replayed as (
        select
            {{ keys }},
            if(is_keyless, net_row_count, 1) as row_count,
            to_json(array_sort(map_entries(coalesce(after, before)))) as image_text
        from ranked
        where
            recency = 1
            and not before_reset
            and if(is_keyless, net_row_count > 0, op != 'd')
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
