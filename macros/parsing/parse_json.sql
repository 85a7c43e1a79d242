{% macro parse_json(column, schema) %}
    from_json(
        case
            when coalesce(json_array_length(concat('[', {{ column }}, ']')), 2) <= 1 then {{ column }}
            else concat('{', {{ column }})
        end,
        '{{ schema }}',
        {{ json_read_options({'columnNameOfCorruptRecord': '_corrupt'}) }}
    )
{% endmacro %}
