{% macro mysql_type_from_code(type_code) %}
    case {{ type_code }}
        when 1 then 'tinyint'
        when 2 then 'smallint'
        when 3 then 'int'
        when 4 then 'float'
        when 5 then 'double'
        when 7 then 'timestamp'
        when 8 then 'bigint'
        when 9 then 'mediumint'
        when 10 then 'date'
        when 11 then 'time'
        when 12 then 'datetime'
        when 13 then 'year'
        when 14 then 'date'
        when 16 then 'bit'
        when 17 then 'timestamp'
        when 18 then 'datetime'
        when 19 then 'time'
        when 245 then 'json'
    end
{% endmacro %}
