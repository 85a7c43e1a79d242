{% test one_open_version_per_key(model, key_columns) %}
    with per_key as (
        select
            {{ key_columns | join(', ') }},
            count_if(is_current) as current_versions,
            count_if(is_current != (valid_to is null)) as mislabelled_versions
        from {{ model }}
        group by {{ key_columns | join(', ') }}
    )

    select *
    from per_key
    where current_versions > 1 or mislabelled_versions > 0
{% endtest %}
