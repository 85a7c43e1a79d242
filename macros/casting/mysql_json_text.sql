{% macro mysql_json_text(json_text) %}
    array_join(transform(
        regexp_extract_all({{ json_text }}, '"(?:[^"\\\\]++|\\\\.)*+"?|[^"]+', 0),
        js_part -> if(js_part like '"%', js_part, regexp_replace(regexp_replace(js_part, '\\s+', ''), '([:,])', '$1 '))
    ), '')
{%- endmacro %}
