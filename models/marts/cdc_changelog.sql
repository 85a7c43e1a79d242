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
    from deduplicated

)

select * from final
