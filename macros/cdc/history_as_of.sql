{% macro history_as_of(as_of, history=none) %}
    {%- set relation = history if history is not none else ref('cdc_history') -%}
    select *
    from {{ relation }}
    where valid_from <= {{ as_of }}
        and (is_current or valid_to > {{ as_of }})
{% endmacro %}
