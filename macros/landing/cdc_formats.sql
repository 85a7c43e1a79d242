{% macro cdc_formats(carrying=none) %}
    {#- The source formats: the one list that the raw tables (create_raw_tables) and the unions of
        the intermediate models read. The same words are the raw table suffixes and
        `source_format`. `carrying` narrows it to the formats with a staging model of that kind
        beside stg_<format>__changes: 'schema_changes' or 'heartbeats'. -#}
    {%- set formats = {
        'kafka_river_canal': [],
        'debezium': ['schema_changes'],
        'canal_flat': ['schema_changes'],
        'tencent_dts': ['schema_changes', 'heartbeats'],
        'lindorm': [],
    } -%}
    {%- if carrying is none -%}
        {{ return(formats.keys() | list) }}
    {%- endif -%}
    {%- if carrying not in ('schema_changes', 'heartbeats') -%}
        {{ exceptions.raise_compiler_error("cdc_formats: carrying is 'schema_changes' or 'heartbeats', not " ~ carrying) }}
    {%- endif -%}
    {%- set carriers = [] -%}
    {%- for fmt, kinds in formats.items() if carrying in kinds -%}
        {%- do carriers.append(fmt) -%}
    {%- endfor -%}
    {{ return(carriers) }}
{% endmacro %}
