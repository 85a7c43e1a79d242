{% macro landed_since_last_build(relation, watermark, column='landing_seq', other_rows_landed=false, landed_in=none) %}
    {#- The filter on `relation` that keeps the rows an incremental build must read: those landed
        after `watermark` (landing_watermark, or landing_watermarks for an input that mixes
        formats; see landed_after), with literal bounds so Iceberg skips older files. One cheap
        query (`limit 1` on a pruned scan) asks whether there are any; the answer is the model's
        batch state (mark_batch), which source_is_empty reads:
        - rows landed: the write runs at once, without first computing the batch to see if it is
          empty (that probe would compute the whole batch a second time);
        - none: the filter is `false`, so Spark's optimizer empties the whole batch at no cost, and
          the write is skipped (no new Iceberg snapshot).
        A full build reads everything and marks nothing; neither does a first one (the model's
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
        {%- do mark_batch(true) -%}
        {{ return(condition) }}
    {%- endif -%}
    {%- if landed_in and watermark is mapping -%}
        {%- set landed = [] -%}
        {%- for fmt, table in landed_in | dictsort -%}
            {%- do landed.append('select ' ~ column ~ ' from ' ~ table ~ ' where ' ~ column ~ ' > ' ~ watermark.get(fmt, -1)) -%}
        {%- endfor -%}
        {%- if run_query('select 1 from (' ~ landed | join(' union all ') ~ ') limit 1') | length == 0 -%}
            {%- do mark_batch(false) -%}
            {{ return('false') }}
        {%- endif -%}
    {%- endif -%}
    {%- set probe = run_query('select 1 from ' ~ relation ~ ' where ' ~ condition ~ ' limit 1') -%}
    {%- if probe | length == 0 -%}
        {%- do mark_batch(false) -%}
        {{ return('false') }}
    {%- endif -%}
    {%- if not is_first_build(watermark) -%}
        {%- do mark_batch(true) -%}
    {%- endif -%}
    {{ return(condition) }}
{% endmacro %}

{% macro mark_batch(has_new_rows) %}
    {#- Records what landed_since_last_build found for the model being compiled: whether its batch
        has new rows. The state of a model with several filtered inputs is `new` when any has rows,
        `empty` when all are empty. Kept in the invocation's memo (build_memo) under the model's
        unique id, because it is known only while the model's SQL is compiled (the probe runs
        then) and dbt runs that model's materialization next, in the same invocation; a unit
        test that renders the model has an id of its own, so it never marks the model. -#}
    {%- set states = build_memo().setdefault('batch_states', {}) -%}
    {%- if has_new_rows or states.get(model.unique_id) != 'new' -%}
        {%- do states.update({model.unique_id: 'new' if has_new_rows else 'empty'}) -%}
    {%- endif -%}
{% endmacro %}


{% macro batch_marked_empty() %}
    {#- The batch state mark_batch recorded for the model being built: true when every filtered
        input was empty, false when any had rows, none when the model marked nothing (a full or
        first build, a model that does not filter with landed_since_last_build). -#}
    {%- set state = build_memo().get('batch_states', {}).get(model.unique_id) -%}
    {{ return(none if state is none else state == 'empty') }}
{% endmacro %}
