{% macro malformed_number_column(image, column_types) %}
    {#- what a number of each family looks like, and the MySQL type names of the family; possessive,
        so a long run of digits is never split two ways (quadratic on a megabyte) -#}
    {%- set number_patterns = [
        ('^-?[0-9]+$', ['tinyint', 'smallint', 'mediumint', 'int', 'integer', 'bigint']),
        ('^[-+]?(?:[0-9]++(?:[.][0-9]*+)?|[.][0-9]++)$', ['decimal', 'numeric', 'dec', 'fixed']),
        ('^[-+]?(?:[0-9]++(?:[.][0-9]*+)?|[.][0-9]++)(?:[eE][-+]?[0-9]++)?$', ['float', 'double', 'real']),
    ] %}
    element_at(filter(
        sort_array(map_keys({{ image }})),
        mn_col -> {{ image }}[mn_col] is not null
            and case regexp_extract(lower(trim(({{ column_types }})[mn_col])), '^([a-z]+)', 1)
                {%- for pattern, type_names in number_patterns %}
                    {%- for type_name in type_names %}
                when '{{ type_name }}' then not {{ image }}[mn_col] rlike '{{ pattern }}'
                    {%- endfor %}
                {%- endfor %}
                else false
            end
    ), 1)
{%- endmacro %}

{% macro malformed_number_reason(image, column_types, database_name, table_name) %}
    element_at(transform(
        array({{ malformed_number_column(image, column_types) }}),
        mn_bad -> case when mn_bad is not null then concat(
            'column ', mn_bad, ' of ', {{ database_name }}, '.', {{ table_name }}, ' is declared ',
            ({{ column_types }})[mn_bad], ' but holds ', substr({{ image }}[mn_bad], 1, 40),
            ', which is not a number: the producer sent a corrupt row image; fix the producer',
            ' (the record cannot be applied)'
        ) end
    ), 1)
{%- endmacro %}
