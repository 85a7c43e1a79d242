{% macro canonical_mysql_image(image, column_types, binary_encoding='latin1', time_zone=none) %}
    transform_values({{ image }}, (_column, _value) -> {{ canonical_mysql_value(
        '_value', '(' ~ column_types ~ ')[_column]', binary_encoding, time_zone) }})
{% endmacro %}
