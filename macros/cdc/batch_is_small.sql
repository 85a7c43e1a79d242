{% macro batch_is_small(relation, watermark, column='landing_seq') %}
    {%- if not execute or not is_incremental() or is_first_build(watermark) -%}
        {{ return(false) }}
    {%- endif -%}
    {%- set counted = run_query(
        'select count(*) from ' ~ relation ~ ' where ' ~ landed_after(watermark, column)) -%}
    {{ return(counted.columns[0].values()[0] <= var('cdc_broadcast_max_rows', 200000) | int) }}
{% endmacro %}
