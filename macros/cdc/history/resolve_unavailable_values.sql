{% macro resolve_unavailable_values(changes) %}
    {%- set keys = cdc_row_key_columns() -%}
    {%- set key_columns = keys | join(', ') -%}
with unavailable_in_key as (

    -- each change with the columns that any change of its key leaves unavailable
    select
        *,
        array_distinct(flatten(collect_set(coalesce(unavailable_columns, array())) over whole_key))
            as key_unavailable_columns
    from {{ changes }}
    window whole_key as (
        partition by {{ key_columns }} order by change_order, change_id
        rows between unbounded preceding and unbounded following
    )

),

column_values as (

    -- one row per change and column of key_unavailable_columns (a key without any: one row, no
    -- column), with the column's last value known at the change
    select
        changes.*,
        unavailable.column_name,
        last_value(
            if(
                changes.op = 't' or changes.is_keyless
                or array_contains(coalesce(changes.unavailable_columns, array()), unavailable.column_name)
                or not map_contains_key(coalesce(changes.image, map()), unavailable.column_name),
                null,
                named_struct('value', changes.image[unavailable.column_name])
            ),
            true
        ) over column_so_far as known
    from unavailable_in_key as changes
        lateral view explode_outer(changes.key_unavailable_columns) unavailable as column_name
    window column_so_far as (
        partition by {{ qualified_columns('changes', keys) }}, unavailable.column_name
        order by changes.change_order, changes.change_id
        rows between unbounded preceding and current row
    )

),

column_values_per_change as (

    -- the known values of each change's unavailable columns gathered on its first row
    select
        *,
        collect_list(
            if(
                array_contains(coalesce(unavailable_columns, array()), column_name),
                named_struct('name', column_name, 'known', known),
                null
            )
        ) over whole_change as resolved_columns,
        row_number() over this_change as column_number
    from column_values
    window
        this_change as (partition by {{ key_columns }}, change_order, change_id order by column_name),
        whole_change as (
            partition by {{ key_columns }}, change_order, change_id order by column_name
            rows between unbounded preceding and unbounded following
        )

)

{%- set resolved_image %}
    case
        when size(per_change.resolved_columns) = 0 then per_change.image
        else map_concat(
            map_filter(per_change.image, (rc_k, rc_v) -> not array_contains(per_change.unavailable_columns, rc_k)),
            map_from_entries(transform(per_change.resolved_columns, rc -> struct(rc.name, rc.known.value)))
        )
    end
{%- endset %}

select
    {{ canonical_columns('history_changes', relation='per_change', values={'image': resolved_image}) | indent(4) }},
    transform(filter(per_change.resolved_columns, rc -> rc.known is null), rc -> rc.name) as unknown_columns
from column_values_per_change as per_change
where per_change.column_number = 1
{%- endmacro %}
