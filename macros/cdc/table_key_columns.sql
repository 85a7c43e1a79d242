{% macro table_key_columns(message_keys, database_name, table_name) %}
    coalesce(
        nullif(array_distinct({{ message_keys }}), array()),
        {{ configured_primary_keys(database_name, table_name) }},
        cast(array() as array<string>)
    )
{%- endmacro %}
