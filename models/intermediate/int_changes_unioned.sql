with unioned as (

    {{ union_staged('changes') }}

),

included as (

    select
        *,
        size(key_columns) = 0 as is_keyless,
        -- an update is keyed by its after image; its before image may name another row
        case when op = 'u' then {{ row_identity('before', 'key_columns') }} end as before_row_key
    from unioned
    where {{ cdc_table_included('database_name', 'table_name') }}

),

split as (

    -- An update whose before image has another identity than its after image (a primary-key
    -- change, or any change of a keyless row) is a delete of the old row and an insert of the new
    -- one. Both halves keep the update's position; their ids derive from the update's.
    select
        included.*,
        half.*
    from included
        lateral view explode(
            case
                when op = 'u' and before_row_key != row_key
                    then array(
                        named_struct(
                            'half_op', 'd', 'half_row_key', before_row_key, 'half_id_suffix', 'key change: old row'
                        ),
                        named_struct('half_op', 'c', 'half_row_key', row_key, 'half_id_suffix', 'key change: new row')
                    )
                else array(named_struct('half_op', op, 'half_row_key', row_key, 'half_id_suffix', ''))
            end
        ) halves as half

),

final as (

    -- the update's halves take their own op, key, images and (derived) id; the rest as staged
    select
        {{ canonical_columns('staged_changes', relation='split', values={
            'change_id': "case when half_id_suffix = '' then change_id
                else md5(concat(change_id, ' ', half_id_suffix)) end",
            'op': 'half_op',
            'row_key': 'half_row_key',
            'primary_key': "case
                when half_op = op then primary_key
                when half_op = 'd' then map_filter(before, (k, v) -> array_contains(key_columns, k))
                else map_filter(after, (k, v) -> array_contains(key_columns, k))
            end",
            'before': "case when half_op != 'c' then before end",
            'after': "case when half_op != 'd' then after end",
            'unavailable_columns': "case when half_op = op or half_op = 'c' then unavailable_columns
                else cast(array() as array<string>) end",
        }) | indent(8) }},
        is_keyless
    from split

)

select * from final
