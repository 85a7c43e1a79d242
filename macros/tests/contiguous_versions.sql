{% test contiguous_versions(model, key_columns, order_by='change_order') %}
    {#- with valid_to_current set (cdc_table_options), an open version's valid_to is that date -#}
    {%- set valid_to = 'if(is_current, null, valid_to)' if cdc_table_options().sets_valid_to_current else 'valid_to' %}
    with ordered as (
        select
            {{ key_columns | join(', ') }},
            valid_from,
            {{ valid_to }} as valid_to,
            closed_by_delete,
            lead(valid_from) over (
                partition by {{ key_columns | join(', ') }} order by {{ order_by }}
            ) as next_valid_from
        from {{ model }}
    )

    select *
    from ordered
    where
        valid_to < valid_from
        or (valid_to is null and next_valid_from is not null)
        or (not closed_by_delete and valid_to is not null and next_valid_from is null)
        or (not closed_by_delete and valid_to != next_valid_from)
        or (closed_by_delete and (valid_to is null or next_valid_from < valid_to))
{% endtest %}
