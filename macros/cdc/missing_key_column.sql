{% macro missing_key_column(image, key_columns) %}
    element_at(
        transform(
            filter({{ key_columns }}, mk_col -> mk_col is null or {{ image }}[mk_col] is null),
            mk_col -> coalesce(mk_col, '<null name>')
        ),
        1
    )
{%- endmacro %}

{% macro missing_key_reason(missing_column, database_name, table_name) %}
    concat(
        'key column ', {{ missing_column }}, ' has no value in the row image of ',
        {{ database_name }}, '.', {{ table_name }},
        ': the message names it as primary key but its row does not carry it; fix the producer',
        ' or set var cdc_primary_keys for this table to columns every row carries'
    )
{%- endmacro %}

{% macro kafka_key_unreadable(kafka_key, key_map, key_columns) %}
    (
        size({{ key_columns }}) = 0 and {{ kafka_key }} is not null
        and trim({{ kafka_key }}) not in ('', 'null') and {{ key_map }} is null
    )
{%- endmacro %}

{% macro kafka_key_unreadable_reason() %}
    concat(
        'the Kafka key is not a JSON object, so its key columns are unknown: use JsonConverter for keys,',
        ' or list the table in var cdc_primary_keys'
    )
{%- endmacro %}
