-- DDL statements of every format that carries them, in one shape, after the project's table
-- filter (macro `cdc_table_included`; filtered DDL is accounted in int_raw_records_unioned).

with unioned as (

    {{ union_staged('schema_changes') }}

),

final as (

    select *
    from unioned
    where {{ cdc_table_included('database_name', 'table_name') }}

)

select * from final
