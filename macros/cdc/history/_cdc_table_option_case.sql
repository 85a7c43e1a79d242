{% macro _cdc_table_option_case(options, branches, default, database_name='database_name', table_name='table_name') %}
    {%- set subject = "concat(coalesce(" ~ database_name ~ ", ''), '.', coalesce(" ~ table_name ~ ", ''))" -%}
    {{ return(first_matching_pattern(subject, options.entries | map(attribute='pattern') | list, branches, default)) }}
{% endmacro %}
