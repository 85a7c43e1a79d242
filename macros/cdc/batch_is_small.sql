{% macro batch_is_small(relation, watermark, column='landing_seq') %}
    {#- True on an incremental build whose new input (rows of `relation` landed after `watermark`)
        is at most var `cdc_broadcast_max_rows` rows (default 200000). Models use it to hint that
        the keys a batch touches be broadcast: Spark's size estimate for keys that come out of
        aggregates and joins is far too high to broadcast them on its own, so it shuffles and sorts
        the whole change log or table on the other side of the join instead. The row count keeps
        the hint off for a batch so large that broadcasting its keys could exhaust driver memory.
        One count over the pruned scan of the new files. -#}
    {%- if not execute or not is_incremental() or is_first_build(watermark) -%}
        {{ return(false) }}
    {%- endif -%}
    {%- set counted = run_query(
        'select count(*) from ' ~ relation ~ ' where ' ~ landed_after(watermark, column)) -%}
    {{ return(counted.columns[0].values()[0] <= var('cdc_broadcast_max_rows', 200000) | int) }}
{% endmacro %}
