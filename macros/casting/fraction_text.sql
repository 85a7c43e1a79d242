{% macro fraction_text(fraction, digits) %}
    if({{ fraction }} = 0, '', concat('.', regexp_replace(lpad(cast({{ fraction }} as string), {{ digits }}, '0'), '(?<!0)0++$', '')))
{%- endmacro %}
