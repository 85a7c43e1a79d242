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
        {%- set landed = [] -%}
        {%- for fmt, table in landed_in | dictsort -%}
            {%- do landed.append('select ' ~ column ~ ' from ' ~ table ~ ' where ' ~ column ~ ' > ' ~ watermark.get(fmt, -1)) -%}
        {%- endfor -%}
        {%- if run_query('select 1 from (' ~ landed | join(' union all ') ~ ') limit 1') | length == 0 -%}
            {{ return(empty) }}
        {%- endif -%}
    {%- endif -%}
    {%- set probe = run_query('select 1 from ' ~ relation ~ ' where ' ~ condition ~ ' limit 1') -%}
    {{ return(empty if probe | length == 0 else new_rows) }}
{% endmacro %}
