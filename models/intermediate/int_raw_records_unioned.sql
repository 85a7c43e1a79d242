-- Every parsed raw record of every format with what it turned out to be (dml, ddl, control,
-- rejected, or filtered: a dml, ddl or malformed record of a table the project's table filter
-- excludes, see macro `cdc_table_included`): the base of the quarantine and of the reconciliation.

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
        {% if not loop.last %}union all{% endif %}
    {% endfor %}

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
