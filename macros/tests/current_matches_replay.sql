{% test current_matches_replay(model, changelog, key_columns) %}
    {#- cdc_current must equal a replay of the whole change log: for each key the change with the
        highest change_order decides the image (the before image for a delete) and is_deleted;
        a keyless row's row_count is the number of its inserts less its deletes.
        Delete markers past `cdc_delete_retention_days` (if set) are left out on both sides. -#}
    {%- set keys = key_columns | join(', ') -%}
    {%- set retention_days = var('cdc_delete_retention_days', none) -%}
    {%- set kept = "true" if retention_days is none
        else "not (is_deleted and " ~ delete_marker_expired('commit_ts', retention_days) ~ ")" -%}
    with ranked as (
        select
            *,
            row_number() over (partition by {{ keys }} order by change_order desc, change_id desc) as recency,
            sum({{ keyless_row_delta('changes') }}) over (partition by {{ keys }}) as net_row_count
        from {{ changelog }} as changes
    ),

    replayed as (
        select {{ keys }}, is_deleted, row_count, image_text
        from (
            select
                {{ keys }},
                commit_ts,
                if(is_keyless, net_row_count <= 0, op = 'd') as is_deleted,
                if(is_keyless, net_row_count, if(op = 'd', 0, 1)) as row_count,
                to_json(array_sort(map_entries(case when op = 'd' then before else after end))) as image_text
            from ranked
            where recency = 1
        ) as latest
        where {{ kept }}
    ),

    stored as (
        select {{ keys }}, is_deleted, row_count, to_json(array_sort(map_entries(image))) as image_text
        from {{ model }}
        where {{ kept }}
    ),

    missing as (
        select 'replay differs from current' as problem, * from replayed
        except
        select 'replay differs from current' as problem, * from stored
    ),

    extra as (
        select 'current differs from replay' as problem, * from stored
        except
        select 'current differs from replay' as problem, * from replayed
    )

    select * from missing
    union all
    select * from extra
{% endtest %}
