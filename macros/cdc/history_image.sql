{% macro history_image(changes) %}
    case when {{ changes }}.op = 'd' then {{ changes }}.before else {{ changes }}.after end
{%- endmacro %}

{% macro keyless_row_delta(changes) %}
    case
        when not {{ changes }}.is_keyless then null
        when {{ changes }}.op = 'd' then -1
        when {{ changes }}.op = 'u' then 0
        else 1
    end
{%- endmacro %}
