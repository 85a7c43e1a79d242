{% macro row_identity(image, key_columns) %}
    {#- Canonical text that identifies a row: its primary key (`row_key`) when the table has one,
        else, for a table without a key, the lowercase hex SHA-256 of its full image (columns in
        name order, values as canonical text, NULL kept as JSON null). Identical keyless rows share
        an identity; cdc_current counts them (`row_count`). Null when `image` is null. -#}
    case
        when {{ image }} is null then null
        when size({{ key_columns }}) > 0 then {{ row_key(image, key_columns) }}
        else sha2(to_json(array_sort(map_entries({{ image }}))), 256)
    end
{%- endmacro %}
