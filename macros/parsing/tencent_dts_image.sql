{% macro tencent_dts_image(columns_text, column_names) %}
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
