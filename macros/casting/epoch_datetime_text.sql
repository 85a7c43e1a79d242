{% macro epoch_datetime_text(value, units_per_second, digits) %}
    {%- set n = 'try_cast(' ~ value ~ ' as bigint)' -%}
    {%- set seconds = '((' ~ n ~ ' - pmod(' ~ n ~ ', ' ~ units_per_second ~ ')) div ' ~ units_per_second ~ ')' -%}
    concat(
        cast(date_add(date'1970-01-01', cast(({{ seconds }} - pmod({{ seconds }}, 86400)) div 86400 as int)) as string),
        ' ',
        lpad(cast(pmod({{ seconds }}, 86400) div 3600 as string), 2, '0'), ':',
        lpad(cast(pmod({{ seconds }}, 3600) div 60 as string), 2, '0'), ':',
        lpad(cast(pmod({{ seconds }}, 60) as string), 2, '0'),
        {{ fraction_text('pmod(' ~ n ~ ', ' ~ units_per_second ~ ')', digits) }}
    )
{%- endmacro %}
