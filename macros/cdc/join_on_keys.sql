{% macro join_on_keys(left, right, keys) %}
    {%- for key in keys -%}
        {{ left }}.{{ key }} = {{ right }}.{{ key }}{{ ' and ' if not loop.last }}
    {%- endfor -%}
{% endmacro %}

{% macro qualified_columns(relation, columns) %}
    {%- for column in columns -%}
        {{ relation }}.{{ column }}{{ ', ' if not loop.last }}
    {%- endfor -%}
{% endmacro %}
