{% macro cdc_formats(carrying=none) %}
    {#- The source formats, from the one list both the project and the Python package read (var
        `cdc_formats` in dbt_project.yml): what the raw tables (create_raw_tables) and the unions of
        the intermediate models read. The same words are the raw table suffixes and
        `source_format`. `carrying` narrows it to the formats with a staging model of that kind
        beside stg_<format>__changes: 'schema_changes' or 'heartbeats'. -#}
    {%- set formats = var('cdc_formats') -%}
    {%- if carrying is none -%}
        {{ return(formats.keys() | list) }}
    {%- endif -%}
    {%- if carrying not in ('schema_changes', 'heartbeats') -%}
        {{ exceptions.raise_compiler_error("cdc_formats: carrying is 'schema_changes' or 'heartbeats', not " ~ carrying) }}
    {%- endif -%}
    {%- set carriers = [] -%}
    {%- for fmt, declared in formats.items() if carrying in declared['carries'] -%}
        {%- do carriers.append(fmt) -%}
    {%- endfor -%}
    {{ return(carriers) }}
{% endmacro %}
