{% macro cdc_column_case() %}
    {%- set modes = ['auto', 'fold', 'keep'] -%}
    {%- set configured = var('cdc_column_case', 'auto') -%}
    {%- set configured = 'auto' if configured is none else configured -%}
    {%- if configured is string -%}
        {%- if configured not in modes -%}
            {{ exceptions.raise_compiler_error(
                "cdc_column_case must be one of " ~ modes | join(', ')
                ~ " or a mapping of source_system patterns to them, got '" ~ configured ~ "'") }}
        {%- endif -%}
        {{ return({'default': configured, 'entries': []}) }}
    {%- endif -%}
    {%- if configured is not mapping -%}
        {{ exceptions.raise_compiler_error(
            "cdc_column_case must be one of " ~ modes | join(', ')
            ~ " or a mapping of source_system patterns to them, got " ~ configured) }}
    {%- endif -%}
    {%- set entries = [] -%}
    {%- for pattern, mode in configured.items() -%}
        {%- if pattern is not string or not pattern -%}
            {{ exceptions.raise_compiler_error(
                "cdc_column_case: each key must be a non-empty source_system pattern, got " ~ pattern) }}
        {%- endif -%}
        {%- if mode not in modes -%}
            {{ exceptions.raise_compiler_error(
                "cdc_column_case['" ~ pattern ~ "']: the mode must be one of " ~ modes | join(', ')
                ~ ", got " ~ mode) }}
        {%- endif -%}
        {%- do entries.append({'pattern': pattern, 'mode': mode}) -%}
    {%- endfor -%}
    {{ return({'default': 'auto', 'entries': entries}) }}
{% endmacro %}

{% macro column_case_folds(source_system, source_dialect) %}
    {%- set settings = cdc_column_case() -%}
    {%- set by_mode = {
        'fold': 'true',
        'keep': 'false',
        'auto': "coalesce(" ~ source_dialect ~ " in ('mysql', 'mariadb'), false)",
    } -%}
    {%- set branches = [] -%}
    {%- for entry in settings.entries -%}
        {%- do branches.append(by_mode[entry.mode]) -%}
    {%- endfor -%}
    {{ return(first_matching_pattern(
        "coalesce(" ~ source_system ~ ", '')", settings.entries | map(attribute='pattern') | list,
        branches, by_mode[settings.default])) }}
{% endmacro %}

{% macro fold_column_names(names) %}
    {{- return('array_distinct(transform(' ~ names ~ ', cc_name -> lower(cc_name)))') -}}
{% endmacro %}

{% macro fold_column_map(image, folds) %}
    {#- one entry per name: a name repeated in the message (duplicate JSON keys) keeps its last value -#}
    {%- set name = 'if(' ~ folds ~ ', lower(cc_name), cc_name)' -%}
    {%- set names = 'array_distinct(transform(map_keys(' ~ image ~ '), cc_name -> ' ~ name ~ '))' -%}
    {%- set sql -%}
        case
            when {{ image }} is null then null
            when size({{ names }}) = size({{ image }})
                then if({{ folds }}, transform_keys({{ image }}, (cc_name, cc_value) -> lower(cc_name)), {{ image }})
            else map_from_arrays(
                {{ names }},
                transform(
                    {{ names }},
                    cc_folded -> element_at(filter(
                        map_entries({{ image }}),
                        cc_entry -> cc_entry.key = array_max(filter(map_keys({{ image }}), cc_name -> {{ name }} = cc_folded))
                    ), -1).value
                )
            )
        end
    {%- endset -%}
    {{- return(sql) -}}
{% endmacro %}

{% macro names_fold(names) %}
    {{- return('exists(' ~ names ~ ', cc_name -> cc_name != lower(cc_name))') -}}
{% endmacro %}
