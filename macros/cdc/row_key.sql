{% macro row_key(image, key_columns) %}
    case
        when size({{ key_columns }}) = 1 then {{ image }}[{{ key_columns }}[0]]
        else to_json(transform(array_sort({{ key_columns }}), k -> {{ image }}[k]))
    end
{% endmacro %}
