{% test typed_values_preserved(model, source_model, database_name, table_name, join_columns) %}
    {#- A typed model must not lose a value: every non-null value in the source model's `image`
        must give a non-null typed column (a failed try_cast gives null). One failing row per lost
        value, with the column, its Spark type and the text that did not cast. `join_columns`
        match a typed row to its source row. -#}
    {%- set columns = typed_columns(database_name, table_name) -%}
    {%- set join_condition = [] -%}
    {%- for column in join_columns -%}
        {%- do join_condition.append("typed." ~ quote_identifier(column) ~ " = source_rows." ~ quote_identifier(column)) -%}
    {%- endfor -%}
    with source_rows as (
        select *
        from {{ source_model }}
        where
            database_name = {{ sql_string_literal(database_name) }}
            and table_name = {{ sql_string_literal(table_name) }}
    ),

    lost_values as (
        {%- for column in columns %}
            {%- set value = "source_rows.image[" ~ sql_string_literal(column['column_name']) ~ "]" %}
            select
                {%- for join_column in join_columns %}
                typed.{{ quote_identifier(join_column) }},
                {%- endfor %}
                {{ sql_string_literal(column['column_name']) }} as column_name,
                {{ sql_string_literal(column['spark_type']) }} as spark_type,
                {{ value }} as source_value
            from {{ model }} as typed
            inner join source_rows on {{ join_condition | join(' and ') }}
            where {{ value }} is not null and typed.{{ _typed_alias(column['column_name']) }} is null
            {% if not loop.last %}union all{% endif %}
        {%- else %}
            select null as column_name
            where false
        {%- endfor %}
    )

    select * from lost_values
{% endtest %}
