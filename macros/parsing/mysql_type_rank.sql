{% macro mysql_type_rank(mysql_type) %}
    case
        when {{ mysql_type }} is null then 0
        when lower(trim({{ mysql_type }})) in (
            'int8', 'int16', 'int32', 'int64', 'float32', 'float64', 'string', 'bytes', 'boolean'
        )
            then 0
        when lower(trim({{ mysql_type }})) rlike '^(decimal|numeric|dec|fixed)( *$| *[(] *[?])' then 1
        else 2
    end
{%- endmacro %}
