{% macro schema_change_screen(changes, stored) %}
    {%- set options = cdc_table_options() -%}
    {%- set mode = schema_change_mode(options) -%}
    {%- set empty = 'cast(array() as array<string>)' %}
schema_stored as (

    -- the change log's changes of the tables of a screened mode (each of them accepted): per
    -- source system and table, its columns and the order of its first change
    {%- if stored is none %}
    select
        cast(null as string) as source_system,
        cast(null as string) as database_name,
        cast(null as string) as table_name,
        cast(null as array<string>) as stored_columns,
        cast(null as string) as first_order
    where false
    {%- else %}
    select
        logged.source_system,
        logged.database_name,
        logged.table_name,
        collect_set(logged_columns.column_name) as stored_columns,
        min(logged.change_order) as first_order
    from {{ stored }} as logged
        lateral view explode(map_keys(coalesce(logged.after, logged.before))) logged_columns as column_name
    where
        {{ schema_change_mode(options, 'logged.database_name', 'logged.table_name') | indent(8) }} != 'evolve'
    group by logged.source_system, logged.database_name, logged.table_name
    {%- endif %}

),

schema_known as (

    -- per table: the columns of its stored changes, and every column and DDL statement
    -- `cdc-lake accept-schema` accepted (register cdc_schema_acceptances)
    select
        coalesce(stored.database_name, accepted.database_name) as database_name,
        coalesce(stored.table_name, accepted.table_name) as table_name,
        stored.stored_columns,
        coalesce(accepted.accepted_columns, {{ empty }}) as accepted_columns,
        coalesce(accepted.accepted_schema_changes, {{ empty }}) as accepted_schema_changes
    from (
        select
            database_name,
            table_name,
            array_distinct(flatten(collect_list(stored_columns))) as stored_columns
        from schema_stored
        group by database_name, table_name
    ) as stored
        full outer join (
            select
                database_name,
                table_name,
                array_distinct(flatten(collect_list(accepted_columns))) as accepted_columns,
                array_distinct(flatten(collect_list(accepted_schema_changes))) as accepted_schema_changes
            from {{ source('cdc_raw', 'cdc_schema_acceptances') }}
            group by database_name, table_name
        ) as accepted
            on
                stored.database_name = accepted.database_name
                and stored.table_name = accepted.table_name

),

schema_ddl as (

    -- per source system and table in mode fail: its ALTER / RENAME TABLE statements that no
    -- acceptance names, in order
    {%- if not options.holds_schema_changes %}
    select
        cast(null as string) as source_system,
        cast(null as string) as database_name,
        cast(null as string) as table_name,
        cast(null as array<struct<change_order: string, schema_change_id: string, ddl_statement: string>>)
            as statements
    where false
    {%- else %}
    select
        ddl.source_system,
        ddl.database_name,
        ddl.table_name,
        array_sort(collect_list(named_struct(
            'change_order', ddl.change_order,
            'schema_change_id', ddl.schema_change_id,
            'ddl_statement', ddl.ddl_statement
        ))) as statements
    from {{ schema_change_statements() }} as ddl
        left join schema_known as known
            on
                ddl.database_name = known.database_name
                and ddl.table_name = known.table_name
    where
        ddl.ddl_type in ('ALTER', 'RENAME')
        and not coalesce(array_contains(known.accepted_schema_changes, ddl.schema_change_id), false)
        and {{ schema_change_mode(options, 'ddl.database_name', 'ddl.table_name') | indent(8) }} = 'fail'
    group by ddl.source_system, ddl.database_name, ddl.table_name
    {%- endif %}

),

schema_moded as (

    -- each change with its table's mode and, per table and per source system and table, its first
    -- change in these changes (one pass: the changes are read once)
    select
        *,
        min_by(map_keys(coalesce(after, before)), change_order) over (
            partition by database_name, table_name
        ) as batch_first_columns,
        min(change_order) over (partition by source_system, database_name, table_name) as batch_first_order
    from (
        select
            *,
            {{ mode | indent(12) }} as schema_mode
        from {{ changes }}
    ) as changes

),

schema_columns as (

    -- the accepted columns: those of the table's stored changes (else, a table new to the change
    -- log, those of its first change here) and the accepted ones (null in mode evolve); and the
    -- first DDL statement not accepted after the table's first change
    select
        moded.*,
        case when moded.schema_mode != 'evolve' then array_distinct(concat(
            coalesce(known.stored_columns, moded.batch_first_columns),
            coalesce(known.accepted_columns, {{ empty }})
        )) end as accepted_columns,
        try_element_at(
            filter(ddl.statements, d -> d.change_order > least(moded.batch_first_order, stored.first_order)), 1
        ) as held_statement
    from schema_moded as moded
        left join schema_known as known
            on
                moded.database_name = known.database_name
                and moded.table_name = known.table_name
        left join schema_stored as stored
            on
                moded.source_system = stored.source_system
                and moded.database_name = stored.database_name
                and moded.table_name = stored.table_name
        left join schema_ddl as ddl
            on
                moded.source_system = ddl.source_system
                and moded.database_name = ddl.database_name
                and moded.table_name = ddl.table_name

),

schema_screened as (

    -- mode fail: a table's changes from the first that brings a new column, or from its first
    -- DDL statement not accepted, are held (is_held), with the reason
    select
        *,
        coalesce(
            schema_mode = 'fail'
            and change_order >= least(column_hold_order, held_statement.change_order),
            false
        ) as is_held,
        concat(
            'schema change of ', database_name, '.', table_name, ' not accepted (schema_changes: fail): ',
            case
                when size(new_columns) > 0
                    then concat('new columns ', array_join(array_sort(new_columns), ', '))
                when change_order >= held_statement.change_order
                    then concat('after ', left(held_statement.ddl_statement, 200))
                else 'after an earlier change of the table brought new columns'
            end,
            '; the table is held until `cdc-lake accept-schema ', database_name, '.', table_name, '`'
        ) as hold_reason
    from (
        select
            *,
            min(case when schema_mode = 'fail' and size(new_columns) > 0 then change_order end) over (
                partition by source_system, database_name, table_name
            ) as column_hold_order
        from (
            select
                *,
                coalesce(
                    array_except(map_keys(coalesce(after, before)), accepted_columns), {{ empty }}
                ) as new_columns
            from schema_columns
        ) as columned
    ) as changes

)
{%- endmacro %}
