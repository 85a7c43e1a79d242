{% macro change_order(parts) %}
    {%- if parts | length == 0 -%}
        {{ exceptions.raise_compiler_error("change_order needs at least one part") }}
    {%- endif -%}
    concat_ws('.'
    {%- for part in parts %}, lpad(cast(coalesce({{ part }}, 0) as string), 19, '0'){% endfor -%}
    )
{% endmacro %}
