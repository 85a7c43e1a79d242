{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='schema_change_id',
        merge_insert_only=true,
    )
}}

-- DDL statements from every format that carries them, one row per statement; re-deliveries
-- collapse on schema_change_id.

with new_schema_changes as (

    select *
    from {{ ref('int_schema_changes_unioned') }}
    where {{ landed_since_last_build(
        ref('int_schema_changes_unioned'), landing_watermarks(), landed_in=staged_from('schema_changes')
    ) }}

),

deduplicated as (

    {{ first_delivery('new_schema_changes', 'schema_change_id') }}

),

final as (

    select
        {{ canonical_columns('staged_schema_changes', relation='deduplicated') | indent(8) }}
    from deduplicated

)

select * from final
