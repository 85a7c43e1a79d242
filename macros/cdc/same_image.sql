{% macro same_image(left, right) %}
    {#- NULL-safe equality of two row images (map<string,string>), whatever their key order. -#}
    (array_sort(map_entries({{ left }})) <=> array_sort(map_entries({{ right }})))
{% endmacro %}
