{% macro parse_json(column, schema) %}
    {#- from_json with an explicit schema that keeps malformed input: the schema must contain a
        `_corrupt string` field, which is non-null when the JSON cannot be read. from_json alone
        reads the first JSON value and ignores what follows (`{...}garbage`, `{...}{...}`), so text
        that is not one complete JSON value (json_array_length of it in brackets is not 0 or 1) is
        made unreadable with a leading `{`: it is then malformed for every schema. -#}
    from_json(
        case
            when coalesce(json_array_length(concat('[', {{ column }}, ']')), 2) <= 1 then {{ column }}
            else concat('{', {{ column }})
        end,
        '{{ schema }}',
        {{ json_read_options({'columnNameOfCorruptRecord': '_corrupt'}) }}
    )
{% endmacro %}
