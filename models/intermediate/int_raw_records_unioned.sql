{#- Canal's base model keeps the message's own database and table fields -#}
{%- set format_values = {
    'canal_flat': {'database_name': 'messages.msg.database', 'table_name': 'messages.msg.`table`'},
} %}

with unioned as (

    {% for fmt in cdc_formats() %}
        select
            {{ canonical_columns('raw_records', relation='messages', values=dict(
                format_values.get(fmt, {}), source_format="'" ~ fmt ~ "'")) | indent(12) }}
        from {{ ref('base_' ~ fmt ~ '__messages') }} as messages
        union all
    {% endfor %}
    -- records that made a build fail, set aside by `cdc-lake set-aside` (the base models leave
    -- them out): rejects with the error as their reason
    select
        {{ canonical_columns('raw_records', relation='set_aside', values={
            'message_in_record': '0', 'database_name': none, 'table_name': none,
            'record_kind': "'rejected'", 'reject_reason': 'set_aside.reason',
            'rejected_value': 'set_aside.kafka_value',
        }) | indent(8) }}
    from {{ source('cdc_raw', 'cdc_set_aside_records') }} as set_aside

),

classified as (

    select
        *,
        -- a table the filter excludes is filtered whatever its records hold: a malformed record
        -- of an excluded table is not the user's concern. One without a table name cannot be
        -- matched and keeps its kind (rejected, or a control record).
        record_kind in ('dml', 'ddl', 'rejected')
        and (record_kind != 'rejected' or table_name is not null)
        and not {{ cdc_table_included('database_name', 'table_name') }} as is_filtered
    from unioned

),

final as (

    -- a filtered record keeps its coordinates and table, not its reject reason or value
    select
        {{ canonical_columns('raw_records', relation='classified', values={
            'record_kind': "case when is_filtered then 'filtered' else record_kind end",
            'reject_reason': 'case when not is_filtered then reject_reason end',
            'rejected_value': 'case when not is_filtered then rejected_value end',
        }) | indent(8) }}
    from classified

)

select * from final
