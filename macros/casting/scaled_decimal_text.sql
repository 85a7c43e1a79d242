{% macro scaled_decimal_text(digits, scale) %}
    {#- Place the decimal point in an integer's text: `digits` is `[-]d...` (the unscaled value),
        `scale` an integer expression. Exactly `scale` fraction digits, at least one integer digit,
        any precision. A negative scale (PostgreSQL 15's numeric(p,-s)) appends zeros instead:
        unscaled 123 with scale -2 is `12300`. `digits` is used once (it may be a costly
        expression); `scale` is repeated. A leading zero is dropped only while more than `scale`
        digits follow it, and never given back: a pattern whose `0*` and `[0-9]+` could split a
        run of zeros every way was quadratic on a long one. -#}
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
