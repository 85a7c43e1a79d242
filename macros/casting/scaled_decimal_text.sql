{% macro scaled_decimal_text(digits, scale) %}
    regexp_replace(
        regexp_replace(
            regexp_replace({{ digits }}, '^(-?)', '$1' || repeat('0', greatest(cast({{ scale }} as int), 0)))
            || repeat('0', greatest(-cast({{ scale }} as int), 0)),
            '^(-?)(?:0(?=[0-9]{' || cast(greatest(cast({{ scale }} as int), 0) + 1 as string) || '}))*+([0-9]+)([0-9]{'
            || cast(greatest(cast({{ scale }} as int), 0) as string) || '})$',
            '$1$2.$3'
        ),
        '\\.$', ''
    )
{%- endmacro %}
