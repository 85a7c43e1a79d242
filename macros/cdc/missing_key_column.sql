{% macro missing_key_column(image, key_columns) %}
    {#- The first key column that has no value in a row image, or null when the key is complete.
        A key list holding a null name (`"pkNames": [null]`) is reported too, as `<null name>`.
        `image` is a map<string,string>, `key_columns` an array<string>; both are repeated. -#}
    element_at(
        transform(
            filter({{ key_columns }}, mk_col -> mk_col is null or {{ image }}[mk_col] is null),
            mk_col -> coalesce(mk_col, '<null name>')
        ),
        1
    )
{%- endmacro %}


{% macro missing_key_reason(missing_column, database_name, table_name) %}
    {#- The reject reason for a row whose key column has no value, in words a user can act on. -#}
    concat(
        'key column ', {{ missing_column }}, ' has no value in the row image of ',
        {{ database_name }}, '.', {{ table_name }},
        ': the message names it as primary key but its row does not carry it; fix the producer',
        ' or set var cdc_primary_keys for this table to columns every row carries'
    )
{%- endmacro %}


{% macro kafka_key_unreadable(kafka_key, key_map, key_columns) %}
    {#- True when a record's key columns are unknown because its Kafka key is there but is not a
        JSON object (and the `cdc_primary_keys` var does not name them). A missing key makes a
        keyless table; a broken one is an error the user must fix. -#}
    (
        size({{ key_columns }}) = 0 and {{ kafka_key }} is not null
        and trim({{ kafka_key }}) not in ('', 'null') and {{ key_map }} is null
    )
{%- endmacro %}


{% macro kafka_key_unreadable_reason() %}
    {#- The reject reason that goes with `kafka_key_unreadable`. -#}
    concat(
        'the Kafka key is not a JSON object, so its key columns are unknown: use JsonConverter for keys,',
        ' or list the table in var cdc_primary_keys'
    )
{%- endmacro %}
