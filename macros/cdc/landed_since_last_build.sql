{% macro landed_since_last_build(relation, watermark, column='landing_seq', other_rows_landed=false, landed_in=none) %}
    {#- The filter on `relation` that keeps the rows an incremental build must read: those landed
        after `watermark` (landing_watermark, or landing_watermarks for an input that mixes
        formats; see landed_after), with literal bounds so Iceberg skips older files. One cheap
        query (`limit 1` on a pruned scan) asks whether there are any; the answer is written into
        the model's SQL as a batch marker that source_is_empty reads:
        - rows landed: the write runs at once, without first computing the batch to see if it is
          empty (that probe would compute the whole batch a second time);
        - none: the filter is `false`, so Spark's optimizer empties the whole batch at no cost, and
          the write is skipped (no new Iceberg snapshot).
        A full build reads everything and carries no marker; so does a first one (the model's
        table is still empty) whose input has rows. A first one whose input is empty as well (a
        format nothing has landed yet) is marked empty: probing its whole batch instead, which
        parses nothing but has Spark analyse the model, cost 1-3 s per such model and build.
        `other_rows_landed` says the model's other input has rows in this batch (a
        table reset landed): the batch is marked as having rows without a query, since probing
        the whole batch would compute it twice. -#}
    {%- set condition = landed_after(watermark, column) -%}
    {%- if not execute or not is_incremental() -%}
        {{ return(condition) }}
    {%- endif -%}
    {%- if other_rows_landed -%}
        {{ return(condition ~ ' /* ' ~ batch_marker(true) ~ ' */') }}
    {%- endif -%}
    {%- if landed_in and watermark is mapping -%}
        {%- set landed = [] -%}
        {%- for fmt, table in landed_in | dictsort -%}
            {%- do landed.append('select ' ~ column ~ ' from ' ~ table ~ ' where ' ~ column ~ ' > ' ~ watermark.get(fmt, -1)) -%}
        {%- endfor -%}
        {%- if run_query('select 1 from (' ~ landed | join(' union all ') ~ ') limit 1') | length == 0 -%}
            {{ return('false /* ' ~ batch_marker(false) ~ ' */') }}
        {%- endif -%}
    {%- endif -%}
    {%- set probe = run_query('select 1 from ' ~ relation ~ ' where ' ~ condition ~ ' limit 1') -%}
    {%- if probe | length == 0 -%}
        {{ return('false /* ' ~ batch_marker(false) ~ ' */') }}
    {%- endif -%}
    {{ return(condition if is_first_build(watermark) else condition ~ ' /* ' ~ batch_marker(true) ~ ' */') }}
{% endmacro %}

{% macro batch_marker(has_new_rows) %}
    {#- The comment landed_since_last_build leaves in a model's SQL; neither text contains the other. -#}
    {{ return('cdc_lake: batch has new rows' if has_new_rows else 'cdc_lake: batch is empty') }}
{% endmacro %}
