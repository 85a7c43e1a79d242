{% macro canonical_mysql_image(image, column_types, binary_encoding='latin1', time_zone=none) %}
    {#- A row image (map<string,string> of MySQL text values) with every value in canonical text:
        canonical_mysql_value applied to each value with the type `column_types[column]`
        (map<string,string>, may be null: values then pass through unchanged), TIMESTAMP values
        read in `time_zone` (topic_time_zone of the record's topic). -#}
    transform_values({{ image }}, (_column, _value) -> {{ canonical_mysql_value(
        '_value', '(' ~ column_types ~ ')[_column]', binary_encoding, time_zone) }})
{% endmacro %}
