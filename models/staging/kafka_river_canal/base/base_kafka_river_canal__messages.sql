{{ config(materialized='incremental', incremental_strategy='append') }}

with source as (

    {{ raw_records_since_last_build('kafka_river_canal') }}

),

parsed as (

    select
        *,
        {{ parse_json('kafka_value', kafka_river_canal_message_schema()) }} as msg
    from source

),

columns_read as (

    select
        *,
        lower(trim(msg.event)) as event,
        {{ table_key_columns('msg.keys', 'msg.db', 'msg.`table`') }} as key_columns,
        transform(msg.columns, c -> c.n) as column_names,
        {{ binlog_position('msg.binlog') }} as binlog_position
    from parsed

),

checked as (

    select
        *,
        -- map_from_entries fails on a null or repeated name: only well-formed column lists are read
        size(column_names) > 0
        and not exists(column_names, n -> n is null)
        and size(array_distinct(column_names)) = size(column_names) as columns_well_formed
    from columns_read

),

images_read as (

    select
        *,
        case when columns_well_formed then map_from_entries(transform(
            msg.columns, c -> struct(c.n, case when coalesce(c.`null`, false) then null else c.v end)
        )) end as row_values,
        -- old values of an UPDATE: only columns flagged updated; absent/null origin_val = was NULL
        case when columns_well_formed and event = 'u' then map_from_entries(transform(
            filter(msg.columns, c -> coalesce(c.updated, false)), c -> struct(c.n, c.origin_val)
        )) end as old_values,
        case when columns_well_formed then map_from_entries(transform(
            msg.columns, c -> struct(c.n, c.t)
        )) end as column_types
    from checked

),

values_checked as (

    select
        *,
        coalesce(
            {{ malformed_number_reason('row_values', 'column_types', 'msg.db', 'msg.`table`') }},
            {{ malformed_number_reason('old_values', 'column_types', 'msg.db', 'msg.`table`') }}
        ) as malformed_number_reason
    from images_read

),

classified as (

    select
        *,
        case
            when kafka_value is null then 'tombstone'
            when msg is null then 'malformed JSON'
            when msg._corrupt is not null then 'malformed JSON or a field of the wrong type'
            when event is null or event not in ('i', 'u', 'd')
                then concat('unknown event: ', coalesce(msg.event, '<missing>'))
            when msg.db is null or msg.`table` is null then 'DML without database or table'
            when size(coalesce(msg.columns, array())) = 0 then 'DML without columns'
            when not columns_well_formed then 'column without a name or named twice'
            when {{ missing_key_column('row_values', 'key_columns') }} is not null
                then {{ missing_key_reason(missing_key_column('row_values', 'key_columns'), 'msg.db', 'msg.`table`') }}
            when malformed_number_reason is not null then malformed_number_reason
            when binlog_position.file_no is null or binlog_position.pos is null
                then concat('unreadable binlog position: ', coalesce(msg.binlog, '<missing>'))
            when msg.time is null then 'DML without commit time (time)'
        end as reject_reason
    from values_checked

),

final as (

    select
        {{ raw_record_outcome("'dml'") | indent(8) }},
        msg.db as database_name,
        msg.`table` as table_name,
        case event when 'i' then 'c' when 'u' then 'u' when 'd' then 'd' end as op,
        key_columns,
        binlog_position.file_no as binlog_file_no,
        binlog_position.pos as binlog_pos,
        row_values,
        old_values,
        column_types,
        msg
    from classified

)

select * from final
