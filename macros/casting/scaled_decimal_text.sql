{% macro scaled_decimal_text(digits, scale) %}
    {#- Place the decimal point in an integer's text: `digits` is `[-]d...` (the unscaled value),
        `scale` a non-negative integer expression. Exactly `scale` fraction digits, at least one
        integer digit, any precision. `digits` is used once (it may be a costly expression);
        `scale` is repeated. -#}
    regexp_replace(
        regexp_replace(
            regexp_replace({{ digits }}, '^(-?)', concat('$1', repeat('0', cast({{ scale }} as int)))),
            concat('^(-?)0*([0-9]+)([0-9]{', cast({{ scale }} as int), '})$'),
            '$1$2.$3'
        ),
        '\\.$', ''
    )
{%- endmacro %}
