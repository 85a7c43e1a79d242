-- DDL statements of every format that carries them, in one shape, after the project's table
-- filter (macro `cdc_table_included`; filtered DDL is accounted in int_raw_records_unioned).

with unioned as (

    {% for fmt in cdc_formats(carrying='schema_changes') %}
        select
            {{ canonical_columns('staged_schema_changes', relation='ddl') | indent(12) }}
        from {{ ref('stg_' ~ fmt ~ '__schema_changes') }} as ddl
        {% if not loop.last %}union all{% endif %}
    {% endfor %}

),

final as (

    select *
    from unioned
    where {{ cdc_table_included('database_name', 'table_name') }}

)

select * from final
