{% macro connect_array_items(raw_json, field_schema) %}
    {#- The element schema (`items`, struct<type, name, parameters>) of an array field of a Kafka
        Connect record: the parsed one when the envelope's parse holds it, else read from the
        record's own text at the field's JSON path (`connect_field_schemas`). Null without a
        schema. One or two function calls, no lambda: it nests cheaply in the lambdas that decode
        a value (Spark's analyzer resolves a lambda only after its function's arguments, one call
        level per pass). `field_schema`: SQL expression of the field's struct in
        `connect_field_schemas`. -#}
    {%- if 'items:' in connect_schema_fields() -%}
        {{ field_schema }}.items
    {%- else -%}
        from_json(
            get_json_object({{ raw_json }}, {{ field_schema }}.path || '.items'),
            'struct<type:string, name:string, parameters:map<string,string>>'
        )
    {%- endif -%}
{%- endmacro %}
