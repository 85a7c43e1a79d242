{% macro same_image(left, right) %}
    (array_sort(map_entries({{ left }})) <=> array_sort(map_entries({{ right }})))
{% endmacro %}
