{% macro duration_time_text(value, units_per_second, digits) %}
    {%- set n = 'try_cast(' ~ value ~ ' as bigint)' -%}
    {%- set seconds = '(abs(' ~ n ~ ') div ' ~ units_per_second ~ ')' -%}
    concat(
        if({{ n }} < 0, '-', ''),
        if({{ seconds }} < 36000, '0', ''), cast({{ seconds }} div 3600 as string), ':',
        lpad(cast({{ seconds }} % 3600 div 60 as string), 2, '0'), ':',
        lpad(cast({{ seconds }} % 60 as string), 2, '0'),
        {{ fraction_text('abs(' ~ n ~ ') % ' ~ units_per_second, digits) }}
    )
{%- endmacro %}
