{% test rows_per_key_match_current(model, source_model, database_name, table_name) %}
    with found as (

        select
            source_system,
            row_key,
            count(*) as occurrences
        from {{ model }}
        group by source_system, row_key

    ),

    expected as (

        select
            source_system,
            row_key,
            greatest(coalesce(row_count, 1), 1) as row_count
        from {{ get_where_subquery(source_model) }}
        where
            database_name = {{ sql_string_literal(database_name) }}
            and table_name = {{ sql_string_literal(table_name) }}
            and not is_deleted

    )

    select
        coalesce(found.source_system, expected.source_system) as source_system,
        coalesce(found.row_key, expected.row_key) as row_key,
        found.occurrences,
        expected.row_count
    from found
    full outer join expected
        on
            found.source_system = expected.source_system
            and found.row_key = expected.row_key
    where
        found.occurrences is null
        or expected.row_count is null
        or found.occurrences != expected.row_count
{% endtest %}
