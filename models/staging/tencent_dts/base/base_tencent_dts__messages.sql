{{ config(materialized='incremental', incremental_strategy='append') }}

with source as (

    {{ raw_records_since_last_build('tencent_dts') }}

),

parsed as (

    select
        *,
        {{ parse_json('kafka_value', tencent_dts_record_schema()) }} as msg
    from source

),

records as (

    select
        *,
        upper(trim(msg.messageType)) as message_type,
        coalesce(
            msg.schemaName,
            case when msg.objectName like '%.%' then substring_index(msg.objectName, '.', 1) end
        ) as database_name,
        coalesce(
            msg.tableName,
            case when msg.objectName like '%.%' then substr(msg.objectName, instr(msg.objectName, '.') + 1) end
        ) as table_name,
        transform(msg.columns, c -> c.name) as column_names,
        {{ table_key_columns(
            "coalesce(nullif(msg.pkNames, array()), transform(filter(msg.columns, c -> coalesce(c.isKey, false)), c -> c.name))",
            "coalesce(msg.schemaName, case when msg.objectName like '%.%' then substring_index(msg.objectName, '.', 1) end)",
            "coalesce(msg.tableName, case when msg.objectName like '%.%' then substr(msg.objectName, instr(msg.objectName, '.') + 1) end)"
        ) }} as key_columns,
        {{ binlog_position('msg.position') }} as binlog_position,
        try_cast(msg.id as bigint) as record_id
    from parsed

),

checked as (

    select
        *,
        -- map_from_arrays fails on a null or repeated name: only well-formed column lists are read
        size(column_names) > 0
        and not exists(column_names, n -> n is null)
        and size(array_distinct(column_names)) = size(column_names) as columns_well_formed
    from records

),

images_read as (

    select
        *,
        case when columns_well_formed then {{ tencent_dts_image('msg.oldColumns', 'column_names') }} end
            as old_values,
        case when columns_well_formed then {{ tencent_dts_image('msg.newColumns', 'column_names') }} end
            as new_values,
        case when columns_well_formed then map_from_entries(transform(
            msg.columns, c -> struct(c.name, coalesce(c.originalType, {{ mysql_type_from_code('c.dataTypeNumber') }}))
        )) end as column_types
    from checked

),

keyed as (

    select
        *,
        case when message_type = 'DELETE' then old_values else new_values end as key_values,
        coalesce(
            {{ malformed_number_reason('new_values', 'column_types', 'database_name', 'table_name') }},
            {{ malformed_number_reason('old_values', 'column_types', 'database_name', 'table_name') }}
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
            when message_type in ('BEGIN', 'COMMIT', 'HEARTBEAT', 'CHECKPOINT') then null
            when message_type = 'DDL' and coalesce(trim(msg.sql), '') = '' then 'DDL without statement (sql)'
            when message_type = 'DDL' then null
            when message_type in ('INSERT', 'UPDATE', 'DELETE')
                then case
                    when database_name is null or table_name is null then 'DML without database or table'
                    when size(coalesce(msg.columns, array())) = 0 then 'DML without columns'
                    when not columns_well_formed then 'column without a name or named twice'
                    when message_type != 'DELETE' and new_values is null
                        then 'newColumns missing, unreadable or not aligned with columns'
                    when message_type != 'INSERT' and old_values is null
                        then 'oldColumns missing, unreadable or not aligned with columns'
                    when {{ missing_key_column('key_values', 'key_columns') }} is not null
                        then {{ missing_key_reason(
                            missing_key_column('key_values', 'key_columns'), 'database_name', 'table_name'
                        ) }}
                    when malformed_number_reason is not null then malformed_number_reason
                    when binlog_position.file_no is null or binlog_position.pos is null
                        then concat('unreadable position: ', coalesce(msg.position, '<missing>'))
                    when msg.timestamp is null then 'DML without timestamp'
                end
            else concat('unknown messageType: ', coalesce(msg.messageType, '<missing>'))
        end as reject_reason,
        -- the kind of an accepted record (raw_record_outcome)
        case
            when message_type = 'DDL' then 'ddl'
            when message_type in ('INSERT', 'UPDATE', 'DELETE') then 'dml'
            else 'control'
        end as accepted_kind
    from keyed

),

final as (

    select
        {{ raw_record_outcome('accepted_kind') | indent(8) }},
        message_type,
        database_name,
        table_name,
        case message_type when 'INSERT' then 'c' when 'UPDATE' then 'u' when 'DELETE' then 'd' end as op,
        key_columns,
        binlog_position.file_no as binlog_file_no,
        binlog_position.pos as binlog_pos,
        record_id,
        old_values,
        new_values,
        column_types,
        msg
    from classified

)

select * from final
