{% test unique_combination(model, combination) %}
    {%- if combination is string or combination | length == 0 -%}
        {{ exceptions.raise_compiler_error("unique_combination: combination must be a list of column names") }}
    {%- endif -%}
    select
        {{ combination | join(', ') }},
        count(*) as occurrences
    from {{ model }}
    group by {{ combination | join(', ') }}
    having count(*) > 1
{% endtest %}
