{% macro table_key_columns(message_keys, database_name, table_name) %}
    {#- The key columns of a row change, as array<string>: the primary key the message names, else
        the table's entry in the `cdc_primary_keys` var, else an empty array, which means the
        table has no primary key and its rows are identified by their full image
        (`row_identity`). Never null: a table without a key is valid input. -#}
    coalesce(
        nullif(array_distinct({{ message_keys }}), array()),
        {{ configured_primary_keys(database_name, table_name) }},
        cast(array() as array<string>)
    )
{%- endmacro %}
