{% test current_matches_history(model, history, key_columns) %}
    {#- cdc_current must equal the last version of cdc_history: a live row has exactly the image
        and row_count of the key's current version; a deleted row has no current version; every current version
        has a live row in current. Under a `where` of the cdc placeholders (spark__get_where_subquery),
        cdc_history is cut to the same keys as the model (tested_keys). -#}
    {%- set keys = key_columns | join(', ') -%}
    with live as (
        select {{ keys }}, row_count, to_json(array_sort(map_entries(image))) as image_text
        from {{ model }}
        where not is_deleted
    ),

    open_versions as (
        select {{ keys }}, row_count, to_json(array_sort(map_entries(image))) as image_text
        from {{ get_where_subquery(history) }} as versions
        where is_current
    ),

    only_in_current as (
        select 'live in current, no such current version' as problem, * from live
        except
        select 'live in current, no such current version' as problem, * from open_versions
    ),

    only_in_history as (
        select 'current version, no such live row' as problem, * from open_versions
        except
        select 'current version, no such live row' as problem, * from live
    )

    select * from only_in_current
    union all
    select * from only_in_history
{% endtest %}
