{% macro row_identity(image, key_columns) %}
    case
        when {{ image }} is null then null
        when size({{ key_columns }}) > 0 then {{ row_key(image, key_columns) }}
        else sha2(to_json(array_sort(map_entries({{ image }}))), 256)
    end
{%- endmacro %}
