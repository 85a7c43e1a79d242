{% macro source_is_empty(source) %}
    {#- True when an incremental batch has no rows. The merge and append macros then write nothing,
        so a build with no new landed data leaves every table at its current Iceberg snapshot.
        A model that filters its input with landed_since_last_build carries the answer in its SQL
        (batch_marker): new rows in any of its inputs mean a batch to write. Any other model pays
        one `limit 1` query, which computes its batch once more. The answer travels in the SQL
        text because it is known only while the model's SQL is compiled (the probe runs then),
        and the compiled SQL is all dbt hands from there to the materialization: at run time
        `config.set` does nothing and vars cannot be set. -#}
    {%- set marked = batch_marked_empty(model.get('compiled_code') or '') -%}
    {%- if marked is not none -%}
        {{ return(marked) }}
    {%- endif -%}
    {%- set result = run_query("select 1 from " ~ batch_source(source) ~ " as batch limit 1") -%}
    {{ return(result | length == 0) }}
{% endmacro %}

{% macro batch_marked_empty(code) %}
    {#- What the batch markers in a model's compiled SQL say: false when any input has new rows,
        true when the inputs are marked empty only, none when the SQL carries no marker. -#}
    {%- if batch_marker(true) in code -%}
        {{ return(false) }}
    {%- elif batch_marker(false) in code -%}
        {{ return(true) }}
    {%- endif -%}
    {{ return(none) }}
{% endmacro %}
