{% macro source_is_empty(source) %}
    {#- True when an incremental batch has no rows. The merge and append macros then write nothing,
        so a build with no new landed data leaves every table at its current Iceberg snapshot.
        A model that filters its input with landed_since_last_build has its answer recorded
        (mark_batch, read by batch_marked_empty): new rows in any of its inputs mean a batch to
        write. Any other model pays one `limit 1` query, which computes its batch once more. -#}
    {%- set marked = batch_marked_empty() -%}
    {%- if marked is not none -%}
        {{ return(marked) }}
    {%- endif -%}
    {%- set result = run_query("select 1 from " ~ batch_source(source) ~ " as batch limit 1") -%}
    {{ return(result | length == 0) }}
{% endmacro %}


{% macro empty_batch_statement(target) %}
    {#- The statement an incremental model runs instead of its write when its batch is empty
        (source_is_empty): a `select` of one line that says so and how it was known, which dbt
        keeps as the model's `target/run` SQL. "marked empty" is the batch state of the model's
        compile (batch_marked_empty, no query); "probed" is the `limit 1` query. -#}
    {%- set how = 'batch marked empty while the model compiled' if batch_marked_empty() else 'batch probed empty' -%}
    {{ return("select 'no new rows for " ~ target ~ ": " ~ how ~ "' as skipped") }}
{% endmacro %}
