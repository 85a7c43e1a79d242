{% macro history_valid_to_current(options) %}
    {%- set branches = [] -%}
    {%- for entry in options.entries -%}
        {%- do branches.append('cast(null as timestamp)' if entry.valid_to_current is none
                               else 'timestamp' ~ sql_string_literal(entry.valid_to_current)) -%}
    {%- endfor -%}
    {%- set default = 'cast(null as timestamp)' if options.valid_to_current is none
                      else 'timestamp' ~ sql_string_literal(options.valid_to_current) -%}
    {{ return(_cdc_table_option_case(options, branches, default)) }}
{% endmacro %}
