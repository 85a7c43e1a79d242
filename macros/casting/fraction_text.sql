{% macro fraction_text(fraction, digits) %}
    {#- `.` and the fraction of a second with trailing zeros removed, or '' when it is zero.
        `fraction` is a non-negative integer count of 10^-digits seconds. -#}
    if({{ fraction }} = 0, '', concat('.', regexp_replace(lpad(cast({{ fraction }} as string), {{ digits }}, '0'), '(?<!0)0++$', '')))
{%- endmacro %}
