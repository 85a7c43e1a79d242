{% macro first_matching_pattern(subject, patterns, branches, default) %}
    {%- if not patterns -%}
        {{ return(default) }}
    {%- endif -%}
    {%- set lines = ['case'] -%}
    {%- for pattern in patterns -%}
        {%- do lines.append('    when ' ~ subject ~ ' rlike ' ~ sql_string_literal('^(?:' ~ pattern ~ ')$')
                            ~ ' then ' ~ branches[loop.index0]) -%}
    {%- endfor -%}
    {%- do lines.append('    else ' ~ default) -%}
    {%- do lines.append('end') -%}
    {{ return(lines | join('\n')) }}
{% endmacro %}
