-- Every format's changes in one shape, after the project's table filter, their column names
-- folded to lower case where the source compares them case-insensitively (var cdc_column_case,
-- docs/table_options.md "Column-name case").

with unioned as (

    {{ union_staged_changes() }}

),

filtered as (

    select
        *,
        {{ column_case_folds('source_system', 'source_dialect') | indent(8) }} as folds_case
    from unioned
    where {{ cdc_table_included('database_name', 'table_name') }}

),

folded as (

    -- Names fold in every place a change holds them, and a name a message repeats keeps its last
    -- value (in every format, folded or not). The row key depends on names where the key
    -- has several columns (sorted by name) or none (the image's hash): a row whose key columns or
    -- key image have an upper-case name is keyed again from the folded names; any other keeps
    -- the key it was staged with (the same text).
    select
        {{ canonical_columns('staged_changes', relation='filtered', values={
            'key_columns': 'if(folds_case, ' ~ fold_column_names('key_columns') ~ ', key_columns)',
            'primary_key': fold_column_map('primary_key', 'folds_case'),
            'before': fold_column_map('before', 'folds_case'),
            'after': fold_column_map('after', 'folds_case'),
            'unavailable_columns': 'if(folds_case, ' ~ fold_column_names('unavailable_columns')
                ~ ', unavailable_columns)',
            'column_types': fold_column_map('column_types', 'folds_case'),
        }) | indent(8) }},
        coalesce(
            folds_case and (
                {{ names_fold('filtered.key_columns') }}
                or {{ names_fold(
                    "map_keys(case when filtered.op = 'd' then filtered.before else filtered.after end)"
                ) }}
            ),
            false
        ) as is_rekeyed
    from filtered

),

rekeyed as (

    select
        {{ canonical_columns('staged_changes', relation='folded', values={
            'row_key': 'case when is_rekeyed then '
                ~ row_identity("(case when op = 'd' then before else after end)", 'key_columns')
                ~ ' else row_key end',
        }) | indent(8) }}
    from folded

),

included as (

    select
        *,
        size(key_columns) = 0 as is_keyless,
        -- an update is keyed by its after image; its before image may name another row
        case when op = 'u' then {{ row_identity('before', 'key_columns') }} end as before_row_key
    from rekeyed

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
