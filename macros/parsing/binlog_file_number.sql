{% macro binlog_file_number(file_name) %}
    try_cast(regexp_extract({{ file_name }}, '(?<![0-9])([0-9]++)$', 1) as bigint)
{%- endmacro %}
