{% macro zoned_time_text(value) %}
    if(
        {{ value }} rlike '^[0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]+)?Z$',
        concat({{ _trim_time_fraction("substr(" ~ value ~ ", 1, length(" ~ value ~ ") - 1)") }}, 'Z'),
        null
    )
{%- endmacro %}
