{% macro landed_since_last_build(relation, watermark, column='landing_seq', other_rows_landed=false, landed_in=none) %}
    {%- set condition = landed_after(watermark, column) -%}
    {%- if not execute or not is_incremental() -%}
        {{ return(condition) }}
    {%- endif -%}
    {%- set new_rows = condition ~ ' /* cdc_lake batch: new rows */' -%}
    {%- set empty = 'false /* cdc_lake batch: empty */' -%}
    {%- if other_rows_landed -%}
        {{ return(new_rows) }}
    {%- endif -%}
    {%- if landed_in and watermark is mapping -%}
        {#- one query names the formats whose base table has rows past the format's watermark -#}
        {%- set probes = [] -%}
        {%- for fmt, table in landed_in | dictsort -%}
            {%- do probes.append("select '" ~ fmt ~ "' from (select 1 from " ~ table ~ ' where ' ~ column ~ ' > '
                                 ~ watermark.get(fmt, -1) ~ ' limit 1) as probe') -%}
        {%- endfor -%}
        {%- set landed = run_query(probes | join(' union all ')).columns[0].values() | sort -%}
        {%- if landed | length == 0 -%}
            {{ return(empty) }}
        {%- endif -%}
        {#- The filter names only those formats. Each branch of the union the relation reads has its
            format as a literal, so Spark drops the others' branches from the plan: a batch of one
            format costs one format's parsing, not five. -#}
        {%- set parts = [] -%}
        {%- for fmt in landed -%}
            {%- do parts.append("(source_format = '" ~ fmt ~ "' and " ~ column ~ ' > ' ~ watermark.get(fmt, -1) ~ ')') -%}
        {%- endfor -%}
        {%- set condition = '(' ~ parts | join(' or ') ~ ')' -%}
        {%- set new_rows = condition ~ ' /* cdc_lake batch: new rows */' -%}
    {%- endif -%}
    {%- set probe = run_query('select 1 from ' ~ relation ~ ' where ' ~ condition ~ ' limit 1') -%}
    {{ return(empty if probe | length == 0 else new_rows) }}
{% endmacro %}
