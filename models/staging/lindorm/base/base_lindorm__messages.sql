{{ config(materialized='incremental', incremental_strategy='append') }}

-- sqlfluff:max_parse_depth:2000

{%- set payload_fields = lindorm_payload_field_names() %}

with source as (

    {{ raw_records_since_last_build('lindorm') }}

),

parsed as (

    select
        *,
        from_json(kafka_key, 'map<string,string>') as key_map,
        {{ parse_json('kafka_value', lindorm_message_schema()) }} as envelope
    from source

),

unwrapped as (

    select
        *,
        coalesce(
            envelope.payload,
            struct(
                {%- for field in payload_fields %}
                    envelope.{{ field }} as {{ field }}{{ "," if not loop.last }}
                {%- endfor %}
            )
        ) as payload,
        {{ connect_field_schemas('envelope.schema.fields') }} as field_schemas
    from parsed

),

imaged as (

    -- the images as sent: the payload holds their JSON text (see connect_images_text)
    select
        *,
        from_json(payload.before, 'map<string,string>', {{ json_read_options() }}) as before_sent,
        from_json(payload.after, 'map<string,string>', {{ json_read_options() }}) as after_sent
    from unwrapped

),

styled as (

    select
        *,
        coalesce(map_contains_key(before_sent, 'ROW') or map_contains_key(after_sent, 'ROW'), false) as is_hbase,
        transform_values(field_schemas, (ld_col, ld_f) -> {{ connect_decoder('ld_f') }}) as column_decoders
    from imaged

),

decoded as (

    select
        *,
        {{ connect_images_text(
            'before_sent', 'after_sent', 'payload.before', 'payload.after', 'kafka_value',
            'column_decoders', 'field_schemas', hbase='is_hbase'
        ) }} as images
    from styled

),

split as (

    select
        *,
        images[0] as before_image,
        images[1] as after_image
    from decoded

),

keyed as (

    select
        *,
        case when payload.op = 'd' then before_image else after_image end as key_image,
        {{ table_key_columns(
            "coalesce(" ~ kafka_key_columns('key_map') ~ ", case when is_hbase then array('ROW') end)",
            'payload.source.namespace', 'payload.source.`table`'
        ) }} as key_columns,
        {{ first_undecodable_column('before_sent', 'after_sent', 'before_image', 'after_image') }}
            as undecodable_column
    from split

),

classified as (

    select
        *,
        case
            when kafka_value is null then 'tombstone'
            when
                envelope is null or envelope._corrupt is not null
                or (payload.before is not null and before_sent is null)
                or (payload.after is not null and after_sent is null)
                or {{ sent_as_json_string('payload.before', 'kafka_value') }}
                or {{ sent_as_json_string('payload.after', 'kafka_value') }}
                then 'malformed JSON or a field of the wrong type'
            when
                payload.op is null and payload.before is null and payload.after is null
                and payload.source is null and kafka_value rlike '"payload"\\s*:\\s*null' then 'tombstone'
            when payload.op is null then 'not a Lindorm change record: no op'
            when payload.op not in ('c', 'r', 'u', 'd') then concat('unknown op: ', payload.op)
            when payload.source.namespace is null or payload.source.`table` is null
                then 'change without namespace or table'
            when payload.source.ts_ms is null then 'change without source.ts_ms (time of the write)'
            when payload.op in ('c', 'r') and payload.after is null then 'insert without after image'
            when payload.op = 'u' and (payload.before is null or payload.after is null)
                then 'update without before or after image'
            when payload.op = 'd' and payload.before is null then 'delete without before image'
            when undecodable_column is not null
                then concat(
                    'undecodable value in column ', undecodable_column,
                    if(
                        is_hbase, ' (HBase cell is not base64)',
                        concat(' (', coalesce(
                            field_schemas[undecodable_column].name,
                            field_schemas[undecodable_column].type
                        ), ')')
                    )
                )
            when {{ kafka_key_unreadable('kafka_key', 'key_map', 'key_columns') }}
                then {{ kafka_key_unreadable_reason() }}
            when {{ missing_key_column('key_image', 'key_columns') }} is not null
                then {{ missing_key_reason(
                    missing_key_column('key_image', 'key_columns'), 'payload.source.namespace', 'payload.source.`table`'
                ) }}
        end as reject_reason
    from keyed

),

final as (

    select
        {{ raw_record_outcome("'dml'") | indent(8) }},
        payload.op,
        payload.source.namespace as database_name,
        payload.source.`table` as table_name,
        is_hbase,
        array_distinct(key_columns) as key_columns,
        before_image,
        after_image,
        case
            when is_hbase
                then transform_values(
                    coalesce(after_sent, before_sent),
                    (ld_col, ld_val) -> if({{ hbase_value_is_text('ld_val') }}, 'varchar', 'varbinary')
                )
            else transform_values(field_schemas, (ld_col, ld_f) -> {{ connect_column_type('ld_f') }})
        end as column_types,
        struct(payload.ts_ms, payload.source) as msg
    from classified

)

select * from final
