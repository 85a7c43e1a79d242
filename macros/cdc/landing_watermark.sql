{% macro landing_watermark(column='landing_seq') %}
    {#- The highest landing sequence already in this incremental model, as a literal, so the
        filter `landing_seq > <literal>` lets Iceberg skip every data file landed before it.
        -1 on a first or full-refresh build (everything is new). -#}
    {%- if not execute or not is_incremental() -%}
        {{ return(-1) }}
    {%- endif -%}
    {%- set result = run_query("select max(" ~ column ~ ") from " ~ this) -%}
    {%- set value = result.columns[0].values()[0] -%}
    {{ return(-1 if value is none else value | int) }}
{% endmacro %}


{% macro landing_watermarks(column='landing_seq') %}
    {#- `landing_watermark` per source format, for a model whose input mixes formats: a mapping
        format -> the highest landing sequence of that format already in the model (empty on a
        first or full-refresh build). One cursor per format, because one over all formats can
        pass a landing of one format that committed while the build was reading another's raw
        table: that landing's records reach the change log one build later, with a sequence below
        the one the other format already moved the cursor to. Runs one query at execution time. -#}
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
    {#- The SQL condition "landed after the watermark": `column > <literal>` for one cursor (an
        int from landing_watermark), or for a mapping from landing_watermarks one such test per
        format, plus every row of a format the mapping does not know. Literal bounds, so Iceberg
        still skips the data files landed before them. -#}
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
    {#- True when a watermark (int or per-format mapping) says the model holds nothing yet. -#}
    {{ return((watermark is mapping and watermark | length == 0)
              or (watermark is not mapping and watermark | int < 0)) }}
{% endmacro %}
