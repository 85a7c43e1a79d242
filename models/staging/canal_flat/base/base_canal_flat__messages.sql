{{ config(materialized='incremental', incremental_strategy='append') }}

with source as (

    {{ raw_records_since_last_build('canal_flat') }}

),

parsed as (

    select
        *,
        case
            when kafka_value is null then null
            when ltrim(kafka_value) like '[%'
                then {{ parse_json('kafka_value', 'array<' ~ canal_flat_message_schema() ~ '>') }}
            else array({{ parse_json('kafka_value', canal_flat_message_schema()) }})
        end as messages
    from source

),

exploded as (

    select
        parsed.kafka_topic,
        parsed.kafka_partition,
        parsed.kafka_offset,
        parsed.kafka_timestamp,
        parsed.kafka_value,
        parsed.landed_at,
        parsed.landing_seq,
        coalesce(m.pos, 0) as message_in_record,
        m.col as msg
    from parsed
        lateral view outer posexplode(messages) m as pos, col

),

keyed as (

    select
        *,
        -- the first key column without a value in any row of the message
        element_at(filter(
            transform(
                msg.data,
                r -> {{ missing_key_column('r', table_key_columns('msg.pkNames', 'msg.database', 'msg.`table`')) }}
            ),
            c -> c is not null
        ), 1) as missing_key_column,
        -- the first value of a numeric column that is no number, in any row or before image
        element_at(filter(
            transform(
                concat(coalesce(msg.data, array()), coalesce(msg.old, array())),
                r -> {{ malformed_number_reason('r', 'msg.mysqlType', 'msg.database', 'msg.`table`') }}
            ),
            reason -> reason is not null
        ), 1) as malformed_number_reason
    from exploded

),

classified as (

    select
        *,
        case
            when kafka_value is null then 'tombstone'
            when msg is null then 'malformed JSON'
            when msg._corrupt is not null then 'malformed JSON or a field of the wrong type'
            when msg.isDdl then null
            when upper(msg.type) in ('INSERT', 'UPDATE', 'DELETE', 'INIT') and msg.data is null then null
            when upper(msg.type) in ('INSERT', 'UPDATE', 'DELETE', 'INIT')
                then
                    case
                        when msg.database is null or msg.table is null then 'DML without database or table'
                        when size(msg.data) = 0 then 'DML without rows'
                        when msg.es is null then 'DML without execute time (es)'
                        when missing_key_column is not null
                            then {{ missing_key_reason('missing_key_column', 'msg.database', 'msg.`table`') }}
                        when malformed_number_reason is not null then malformed_number_reason
                        when
                            upper(msg.type) = 'UPDATE' and msg.old is not null
                            and size(msg.old) != size(msg.data) then 'UPDATE with old and data of different lengths'
                    end
            -- QUERY without isDdl: the statement text of the row events that follow (MariaDB's
            -- annotate rows, MySQL's binlog_rows_query_log_events), sent unless filterQueryDml
            when upper(msg.type) in ('GTID', 'XACOMMIT', 'XAROLLBACK', 'MHEARTBEAT', 'QUERY') then null
            else concat('unknown type: ', coalesce(msg.type, '<missing>'))
        end as reject_reason,
        -- the kind of an accepted record (raw_record_outcome)
        case
            when msg.isDdl then 'ddl'
            when upper(msg.type) in ('INSERT', 'UPDATE', 'DELETE', 'INIT') and msg.data is not null then 'dml'
            else 'control'
        end as accepted_kind
    from keyed

),

final as (

    select
        {{ raw_record_outcome('accepted_kind', message_in_record='message_in_record') | indent(8) }},
        msg
    from classified

)

select * from final
