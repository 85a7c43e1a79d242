{% macro history_same_tracked_image(options, image, previous_image) %}
    {%- set branches = [] -%}
    {%- for entry in options.entries -%}
        {%- set columns = entry.track_history or entry.track_history_except -%}
        {%- if columns -%}
            {%- set names = [] -%}
            {%- for column in columns -%}
                {%- do names.append(sql_string_literal(column)) -%}
            {%- endfor -%}
            {%- set kept = ('' if entry.track_history else 'not ') ~ 'array_contains(array(' ~ names | join(', ')
                           ~ '), th_k)' -%}
            {%- do branches.append(same_image('map_filter(' ~ image ~ ', (th_k, th_v) -> ' ~ kept ~ ')',
                                              'map_filter(' ~ previous_image ~ ', (th_k, th_v) -> ' ~ kept ~ ')')
                                   | trim) -%}
        {%- else -%}
            {%- do branches.append('false') -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(_cdc_table_option_case(options, branches, 'false')) }}
{% endmacro %}
