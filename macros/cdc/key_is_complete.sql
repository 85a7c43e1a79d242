{% macro key_is_complete(image, key_columns) %}
    {#- True when the image has a non-null value for every key column. -#}
    (size({{ key_columns }}) > 0 and forall({{ key_columns }}, k -> {{ image }}[k] is not null))
{% endmacro %}
