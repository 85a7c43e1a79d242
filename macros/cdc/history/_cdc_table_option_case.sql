{% macro _cdc_table_option_case(options, branches, default, database_name='database_name', table_name='table_name') %}
    {%- set subject = "concat(coalesce(" ~ database_name ~ ", ''), '.', coalesce(" ~ table_name ~ ", ''))" -%}
    {%- if not options.entries -%}
        {{ return(default) }}
    {%- endif -%}
    {%- set lines = ['case'] -%}
    {%- for entry in options.entries -%}
        {%- do lines.append('    when ' ~ subject ~ ' rlike ' ~ sql_string_literal('^(?:' ~ entry.pattern ~ ')$')
                            ~ ' then ' ~ branches[loop.index0]) -%}
    {%- endfor -%}
    {%- do lines.append('    else ' ~ default) -%}
    {%- do lines.append('end') -%}
    {{ return(lines | join('\n')) }}
{% endmacro %}
