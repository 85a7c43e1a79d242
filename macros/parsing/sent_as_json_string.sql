{% macro sent_as_json_string(field_text, raw_json) %}
    (
        {{ field_text }} is not null
        and instr({{ raw_json }}, trim(both '[]' from to_json(array({{ field_text }})))) > 0
    )
{%- endmacro %}
