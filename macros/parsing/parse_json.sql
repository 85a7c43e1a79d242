{% macro parse_json(column, schema) %}
    {#- from_json with an explicit schema that keeps malformed input: the schema must contain a
        `_corrupt string` field, which holds the raw text when the JSON cannot be read. -#}
    from_json({{ column }}, '{{ schema }}', map('columnNameOfCorruptRecord', '_corrupt'))
{% endmacro %}
