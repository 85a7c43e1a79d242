{% test typed_values_preserved(model, source_model, database_name, table_name, join_columns) %}
    {#- A typed model must not lose a value: every non-null value in the source model's `image`
        must give a non-null typed column (a failed try_cast gives null). One failing row per lost
        value, with the column, its Spark type and the text that did not cast. `join_columns`
        match a typed row to its source row. The typed rows are joined to their source rows once,
        then `stack` makes one row per column (a union of one join per column made a plan as wide
        as the table: seconds of planning on twenty columns). A check row by row: under the
        marts' `where: __cdc_batch__` a scheduled build reads the rows its last batch wrote, on
        both the typed model and the source rows (tested_batch: through the views to
        cdc_history's batch); every row after a first or full build, or when a view it reads
        was redefined. -#}
    {%- set columns = typed_columns(database_name, table_name) -%}
    {%- set join_condition = [] -%}
    {%- for column in join_columns -%}
        {%- do join_condition.append("typed." ~ quote_identifier(column) ~ " = source_rows." ~ quote_identifier(column)) -%}
    {%- endfor -%}
    with source_rows as (
        select *
        from {{ get_where_subquery(source_model) }}
        where
            database_name = {{ sql_string_literal(database_name) }}
            and table_name = {{ sql_string_literal(table_name) }}
    ),

    column_values as (
        {%- if columns %}
            select
                {%- for join_column in join_columns %}
                typed.{{ quote_identifier(join_column) }},
                {%- endfor %}
                stack(
                    {{ columns | length }},
                    {%- for column in columns %}
                    {{ sql_string_literal(column['column_name']) }},
                    {{ sql_string_literal(column['spark_type']) }},
                    source_rows.image[{{ sql_string_literal(column['column_name']) }}],
                    typed.{{ _typed_alias(column['column_name']) }} is null{{ ',' if not loop.last }}
                    {%- endfor %}
                ) as (column_name, spark_type, source_value, typed_value_is_null)
            from {{ model }} as typed
            inner join source_rows on {{ join_condition | join(' and ') }}
        {%- else %}
            select
                {%- for join_column in join_columns %}
                null as {{ quote_identifier(join_column) }},
                {%- endfor %}
                null as column_name,
                null as spark_type,
                null as source_value,
                null as typed_value_is_null
            where false
        {%- endif %}
    ),

    lost_values as (
        select
            {%- for join_column in join_columns %}
            {{ quote_identifier(join_column) }},
            {%- endfor %}
            column_name,
            spark_type,
            source_value
        from column_values
        where source_value is not null and typed_value_is_null
    )

    select * from lost_values
{% endtest %}
