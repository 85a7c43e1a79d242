{% macro cdc_formats(carrying=none) %}
    {%- set formats = var('cdc_formats') -%}
    {%- if carrying is none -%}
        {{ return(formats.keys() | list) }}
    {%- endif -%}
    {%- if carrying not in ('schema_changes', 'heartbeats', 'snapshot_markers') -%}
        {{ exceptions.raise_compiler_error(
            "cdc_formats: carrying is 'schema_changes', 'heartbeats' or 'snapshot_markers', not " ~ carrying) }}
    {%- endif -%}
    {%- set carriers = [] -%}
    {%- for fmt, declared in formats.items() if carrying in declared['carries'] -%}
        {%- do carriers.append(fmt) -%}
    {%- endfor -%}
    {{ return(carriers) }}
{% endmacro %}
