{% macro landing_watermark(column='landing_seq') %}
    {%- if not execute or not is_incremental() -%}
        {{ return(-1) }}
    {%- endif -%}
    {%- set result = run_query("select max(" ~ column ~ ") from " ~ this) -%}
    {%- set value = result.columns[0].values()[0] -%}
    {{ return(-1 if value is none else value | int) }}
{% endmacro %}

{% macro landing_watermarks(column='landing_seq') %}
    {%- if not execute or not is_incremental() -%}
        {{ return({}) }}
    {%- endif -%}
    {%- set result = run_query(
        "select source_format, max(" ~ column ~ ") from " ~ this
        ~ " where source_format is not null group by source_format") -%}
    {%- set marks = {} -%}
    {%- for row in result.rows -%}
        {%- do marks.update({row[0]: row[1] | int}) -%}
    {%- endfor -%}
    {{ return(marks) }}
{% endmacro %}

{% macro landed_after(watermark, column='landing_seq', format_column='source_format') %}
    {%- if watermark is mapping -%}
        {%- if watermark | length == 0 -%}
            {{ return(column ~ ' > -1') }}
        {%- endif -%}
        {%- set parts = [] -%}
        {%- for fmt, mark in watermark | dictsort -%}
            {%- do parts.append('(' ~ format_column ~ " = '" ~ fmt ~ "' and " ~ column ~ ' > ' ~ mark ~ ')') -%}
        {%- endfor -%}
        {%- do parts.append(format_column ~ " not in ('" ~ (watermark.keys() | sort | join("', '")) ~ "')") -%}
        {{ return('(' ~ parts | join(' or ') ~ ')') }}
    {%- endif -%}
    {{ return(column ~ ' > ' ~ watermark) }}
{% endmacro %}

{% macro is_first_build(watermark) %}
    {{ return((watermark is mapping and watermark | length == 0)
              or (watermark is not mapping and watermark | int < 0)) }}
{% endmacro %}
