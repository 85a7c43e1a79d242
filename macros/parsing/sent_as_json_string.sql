{% macro sent_as_json_string(field_text, raw_json) %}
    {#- True when a field read as text (an envelope's `before`/`after`, kept as JSON text to decode
        its values by JSON type) was sent as a JSON *string* holding object text (`"after":"{\"id\":1}"`)
        rather than as an object: the JSON string literal of the text stands in the raw record. An
        object's compact text never appears there as a string literal, short of a value that
        quotes the whole image. Such a double-encoded image is a field of the wrong type.
        The literal is `to_json(array(text))` without its brackets, trimmed off, not matched by a
        regex: `.` matches no line terminator, and to_json leaves U+0085, U+2028 and U+2029 as they
        are, so `^\[(.*)\]$` extracted '' from such text and every record held it (instr of '' is
        1): images with these characters were rejected as double-encoded. -#}
    (
        {{ field_text }} is not null
        and instr({{ raw_json }}, trim(both '[]' from to_json(array({{ field_text }})))) > 0
    )
{%- endmacro %}
