{% macro history_as_of(as_of, history=none) %}
    {#- The state of every source row at a point in time, from cdc_history: the versions whose
        half-open interval [valid_from, valid_to) contains `as_of`. Rows deleted by then, or not yet
        inserted, are absent. `as_of` is a SQL expression, e.g. "timestamp'2025-01-01 00:00:00'".

        Example (an analysis or model):
            select row_key, image
            from ({{ history_as_of("timestamp'2025-01-01 12:00:00'") }}) as state
            where table_name = 'orders'
    -#}
    {%- set relation = history if history is not none else ref('cdc_history') -%}
    select *
    from {{ relation }}
    where valid_from <= {{ as_of }}
        and (valid_to is null or valid_to > {{ as_of }})
{% endmacro %}
