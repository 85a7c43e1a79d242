{% macro row_key(image, key_columns) %}
    {#- Canonical text of a primary key: the value itself for a one-column key, otherwise a JSON
        array of the values in key-column-name order (unambiguous whatever the values contain).
        `image` is a map<string,string>, `key_columns` an array<string> expression. -#}
    case
        when size({{ key_columns }}) = 1 then {{ image }}[{{ key_columns }}[0]]
        else to_json(transform(array_sort({{ key_columns }}), k -> {{ image }}[k]))
    end
{% endmacro %}
