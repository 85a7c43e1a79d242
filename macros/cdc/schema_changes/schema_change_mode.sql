{% macro schema_change_mode(options, database_name='database_name', table_name='table_name') %}
    {%- set branches = [] -%}
    {%- for entry in options.entries -%}
        {%- do branches.append(sql_string_literal(entry.schema_changes)) -%}
    {%- endfor -%}
    {{ return(_cdc_table_option_case(options, branches, "'evolve'", database_name, table_name)) }}
{% endmacro %}
