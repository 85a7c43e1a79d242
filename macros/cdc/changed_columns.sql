{% macro changed_columns(op, before, after) %}
    case {{ op }}
        when 'd' then array_sort(map_keys({{ before }}))
        when 'u' then array_sort(filter(
            array_distinct(concat(map_keys({{ after }}), map_keys(coalesce({{ before }}, map())))),
            k -> not ({{ before }}[k] <=> {{ after }}[k])
                or map_contains_key(coalesce({{ before }}, map()), k) != map_contains_key({{ after }}, k)
        ))
        else array_sort(map_keys({{ after }}))
    end
{% endmacro %}
