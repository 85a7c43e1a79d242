{% test typed_values_preserved(model, source_model, database_name, table_name, join_columns) %}
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
