{% macro plain_decimal_text(number_text, scale) %}
    element_at(transform(
        array({{ exponent_free_number_text(number_text) }}),
        pd_plain -> if(
            cast({{ scale }} as int) <= 0,
            substring_index(pd_plain, '.', 1),
            concat(
                substring_index(pd_plain, '.', 1), '.',
                rpad(if(pd_plain like '%.%', substring_index(pd_plain, '.', -1), ''), cast({{ scale }} as int), '0')
            )
        )
    ), 1)
{%- endmacro %}

{% macro exponent_free_number_text(number_text) %}
    {%- set sign = "if(ef_text like '-%', '-', '')" -%}
    {%- set whole = "regexp_extract(ef_text, '^-?([0-9]*)', 1)" -%}
    {%- set fraction = "regexp_extract(ef_text, '^-?[0-9]*\\\\.([0-9]*)', 1)" -%}
    {%- set exponent = "cast(regexp_extract(ef_text, '[eE]([-+]?[0-9]+)$', 1) as int)" -%}
    {%- set digits = "concat(" ~ whole ~ ", " ~ fraction ~ ")" -%}
    {%- set point = "(length(" ~ whole ~ ") + " ~ exponent ~ ")" -%}
    element_at(transform(
        array({{ number_text }}),
        ef_text -> case
            when not ef_text rlike '[eE]' then ef_text
            when {{ point }} <= 0 then concat({{ sign }}, '0.', repeat('0', -{{ point }}), {{ digits }})
            when {{ point }} >= length({{ digits }})
                then concat({{ sign }}, {{ digits }}, repeat('0', {{ point }} - length({{ digits }})))
            else concat(
                {{ sign }},
                coalesce(nullif(trim(leading '0' from substr({{ digits }}, 1, {{ point }})), ''), '0'),
                '.', substr({{ digits }}, {{ point }} + 1)
            )
        end
    ), 1)
{%- endmacro %}
