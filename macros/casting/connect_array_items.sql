{% macro connect_array_items(raw_json, field_schema) %}
    {%- if 'items:' in connect_schema_fields() -%}
        {{ field_schema }}.items
    {%- else -%}
        from_json(
            get_json_object({{ raw_json }}, {{ field_schema }}.path || '.items'),
            'struct<type:string, name:string, parameters:map<string,string>>'
        )
    {%- endif -%}
{%- endmacro %}
