{% test one_open_version_per_key(model, key_columns) %}
    {#- with valid_to_current set (cdc_table_options), an open version's valid_to is that date -#}
    {%- set open_valid_to = 'true' if cdc_table_options().sets_valid_to_current else 'valid_to is null' %}
    with per_key as (
        select
            {{ key_columns | join(', ') }},
            count_if(is_current) as current_versions,
            count_if(if(is_current, not ({{ open_valid_to }}), valid_to is null)) as mislabelled_versions
        from {{ model }}
        group by {{ key_columns | join(', ') }}
    )

    select *
    from per_key
    where current_versions > 1 or mislabelled_versions > 0
{% endtest %}
