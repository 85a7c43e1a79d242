{% macro tencent_dts_image(columns_text, column_names) %}
    {#- A Tencent DTS row image (`oldColumns` / `newColumns`, read as raw JSON text) as
        map<string,string>. Two shapes are accepted, told apart by the first character: a JSON
        array of values aligned with `columns` (paired with `column_names`, an array<string>; null
        when the lengths differ) or a JSON object keyed by column name. A JSON null element is a
        SQL NULL; numbers keep their digits. Null when the text is null or neither shape parses.
        `column_names` must be non-null, distinct and non-empty (the caller checks). -#}
    case
        when ltrim({{ columns_text }}) like '[%' then element_at(transform(
            array(from_json({{ columns_text }}, 'array<string>', {{ json_read_options() }})),
            _values -> case
                when size(_values) = size({{ column_names }}) then map_from_arrays({{ column_names }}, _values)
            end
        ), 1)
        when ltrim({{ columns_text }}) like {{ "'{%'" }} then from_json({{ columns_text }}, 'map<string,string>', {{ json_read_options() }})
    end
{% endmacro %}
