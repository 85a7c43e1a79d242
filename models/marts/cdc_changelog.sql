{{
    config(
        materialized='incremental',
        incremental_strategy='merge',
        unique_key='change_id',
        merge_insert_only=true,
        on_schema_change='append_new_columns',
        partition_by=['source_format'],
    )
}}

{%- set watermark = landing_watermarks() %}
{#- option schema_changes (cdc_table_options): ignore_new_columns and fail screen the batch against
    each table's accepted columns (macro schema_change_screen; docs/table_options.md) -#}
{%- set screens = cdc_table_options().screens_schema_changes %}
-- the register the screen reads (a unit test may set the option when the project's vars do not):
-- depends_on: {{ source('cdc_raw', 'cdc_schema_acceptances') }}
{%- set batch_filter = landed_since_last_build(
    ref('int_changes_unioned'), watermark, landed_in=staged_from('changes')
) %}

with new_changes as (

    select *
    from {{ ref('int_changes_unioned') }}
    where {{ batch_filter }}
    {#- the batch this build writes, for the data tests of a scheduled build (tested_batch) #}
    {{- tested_batch_note(watermark) }}

),

deduplicated as (

    {{ first_delivery('new_changes', 'change_id') }}

),
{%- if screens %}

{{ schema_change_screen('deduplicated', this if is_incremental() else none) }},

kept as (

    -- a change held under mode fail goes to cdc_rejected_messages instead; under
    -- ignore_new_columns, the columns the table has not accepted leave the images
    select
        {{ canonical_columns('staged_changes', relation='schema_screened', values={
            'before': schema_kept_columns('before'),
            'after': schema_kept_columns('after'),
            'unavailable_columns': schema_kept_columns('unavailable_columns', 'array'),
            'column_types': schema_kept_columns('column_types'),
        }) | indent(8) }},
        is_keyless
    from schema_screened
    where not is_held

),
{%- endif %}

final as (

    select
        change_id,
        source_format,
        source_system,
        database_name,
        table_name,
        op,
        row_key,
        primary_key,
        is_keyless,
        before,
        after,
        unavailable_columns,
        {{ changed_columns('op', 'before', 'after') }} as changed_columns,
        column_types,
        commit_ts,
        capture_ts,
        change_order,
        source_position,
        gtid,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        row_in_message,
        landing_seq
    from {{ 'kept' if screens else 'deduplicated' }}

)

select * from final
