{% macro plain_decimal_text(number_text, scale) %}
    {#- A decimal sent as a JSON number (Kafka JsonConverter `decimal.format=NUMERIC`) to text with
        exactly `scale` fraction digits. Spark reads JSON numbers as doubles, so this is exact only
        up to ~15 significant digits (further digits are truncated, never rounded). Arguments are
        repeated: pass cheap expressions. -#}
    {%- set plain = "if(" ~ number_text ~ " rlike '[eE]', cast(try_cast(" ~ number_text
        ~ " as decimal(38, 18)) as string), " ~ number_text ~ ")" -%}
    if(
        cast({{ scale }} as int) <= 0,
        substring_index({{ plain }}, '.', 1),
        concat(
            substring_index({{ plain }}, '.', 1), '.',
            rpad(if({{ plain }} like '%.%', substring_index({{ plain }}, '.', -1), ''), cast({{ scale }} as int), '0')
        )
    )
{%- endmacro %}
