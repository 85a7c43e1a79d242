{{ config(materialized='incremental', incremental_strategy='append') }}

-- sqlfluff:max_parse_depth:2000

{%- set payload_fields = debezium_payload_field_names() %}

with source as (

    {{ raw_records_since_last_build('debezium') }}

),

parsed as (

    select
        *,
        from_json(kafka_key, 'map<string,string>') as key_map,
        {{ parse_json('kafka_value', debezium_message_schema()) }} as envelope
    from source

),

unwrapped as (

    select
        *,
        -- the envelope's payload, or the top-level fields of a bare payload
        coalesce(
            envelope.payload,
            struct(
                {%- for field in payload_fields %}
                    envelope.{{ field }} as {{ field }}{{ "," if not loop.last }}
                {%- endfor %}
            )
        ) as payload,
        -- logical type of every column: the schema of the `after` (else `before`) row struct
        {{ connect_field_schemas('envelope.schema.fields') }} as field_schemas
    from parsed

),

typed as (

    select
        *,
        -- the images as sent: the payload holds their JSON text (see connect_images_text)
        from_json(payload.before, 'map<string,string>', {{ json_read_options() }}) as before_sent,
        from_json(payload.after, 'map<string,string>', {{ json_read_options() }}) as after_sent,
        transform_values(field_schemas, (dbz_col, dbz_f) -> {{ connect_decoder('dbz_f') }}) as column_decoders,
        transform_values(field_schemas, (dbz_col, dbz_f) -> {{ connect_column_type('dbz_f') }}) as column_types
    from unwrapped

),

kept as (

    -- The columns each image leaves unavailable: a connector that marks a value it was not sent
    -- (PostgreSQL: an unchanged TOASTed column) writes its placeholder there. The marker is
    -- neither decoded nor kept.
    {%- set marks_unavailable = "coalesce(payload.source.connector in ('postgresql', 'oracle'), false)" %}
    {%- set before_unavailable = "if(" ~ marks_unavailable ~ ", "
        ~ unavailable_columns('before_sent', unavailable_value_forms()) ~ ", array())" %}
    {%- set after_unavailable = "if(" ~ marks_unavailable ~ ", "
        ~ unavailable_columns('after_sent', unavailable_value_forms()) ~ ", array())" %}
    select
        *,
        {{ before_unavailable }} as before_unavailable,
        {{ after_unavailable }} as after_unavailable,
        {{ without_columns('before_sent', before_unavailable) }} as before_kept,
        {{ without_columns('after_sent', after_unavailable) }} as after_kept
    from typed

),

decoded as (

    select
        *,
        -- DDL records name their database in databaseName; dtle's do not name the table
        coalesce(payload.databaseName, nullif(concat_ws('.', payload.source.db, payload.source.schema), ''))
            as database_name,
        coalesce(
            payload.source.`table`,
            -- the id's last part, without its quotes: "db"."table" or db.schema.table
            nullif(replace(substring_index(element_at(payload.tableChanges, 1).id, '.', -1), '"', ''), ''),
            {{ ddl_table_name('payload.ddl') }}
        ) as table_name,
        {{ connect_images_text(
            'before_kept', 'after_kept', 'payload.before', 'payload.after', 'kafka_value',
            'column_decoders', 'field_schemas'
        ) }} as images
    from kept

),

split as (

    select
        *,
        images[0] as before_decoded,
        images[1] as after_decoded
    from decoded

),

keyed as (

    select
        *,
        -- (a key column is never unavailable: the images as decoded name the row)
        case when payload.op = 'd' then before_decoded else after_decoded end as key_image,
        {{ table_key_columns(kafka_key_columns('key_map'), 'database_name', 'table_name') }} as key_columns,
        -- the first column whose value was sent but does not decode
        {{ first_undecodable_column('before_kept', 'after_kept', 'before_decoded', 'after_decoded') }}
            as undecodable_column
    from split

),

imaged as (

    -- What each image leaves unknown, and the images without it. An unavailable after value that
    -- the before image carries (an update under REPLICA IDENTITY FULL) is that value: the column
    -- did not change. A PostgreSQL delete whose before image holds only the key (REPLICA IDENTITY
    -- DEFAULT) leaves every other column unknown. cdc_history takes an unknown value from the
    -- key's previous version.
    {%- set after_unknown %}
        filter(after_unavailable, dbz_c -> not (
            map_contains_key(coalesce(before_decoded, map()), dbz_c) and not array_contains(before_unavailable, dbz_c)
        ))
    {%- endset %}
    {%- set before_unknown %}
        case
            when
                payload.op = 'd' and payload.source.connector = 'postgresql'
                and {{ key_only_image('before_sent', 'key_columns') }}
                then array_sort(filter(map_keys(before_sent), dbz_c -> not array_contains(key_columns, dbz_c)))
            else before_unavailable
        end
    {%- endset %}
    select
        *,
        {{ after_unknown }} as after_unknown,
        {{ before_unknown }} as before_unknown,
        {{ without_columns('before_decoded', before_unknown) }} as before_image,
        transform_values(
            after_decoded,
            (dbz_c, dbz_v) -> if(
                array_contains(after_unavailable, dbz_c) and not array_contains({{ after_unknown }}, dbz_c),
                before_decoded[dbz_c], dbz_v
            )
        ) as after_image
    from keyed

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
            when payload.ddl is not null then null
            when payload.op is null and upper(payload.status) in ('BEGIN', 'END') then null
            when
                payload.op is null and payload.before is null and payload.after is null
                and payload.source is null and envelope.schema is null
                and kafka_value rlike '"payload"\\s*:\\s*null' then 'tombstone'
            when
                payload.op is null and payload.ts_ms is not null and payload.before is null
                and payload.after is null and payload.source is null then null
            when payload.op is null then 'not a Debezium message: no op, ddl or status'
            -- a PostgreSQL logical decoding message (pg_logical_emit_message): no row, no table
            when payload.op = 'm' then null
            when payload.op not in ('c', 'r', 'u', 'd', 't') then concat('unknown op: ', payload.op)
            when database_name is null or table_name is null then 'DML without database or table'
            when payload.op = 't' then null
            when payload.op in ('c', 'r') and payload.after is null then 'insert without after image'
            when payload.op = 'u' and payload.after is null then 'update without after image'
            -- an update without a before image (PostgreSQL's default REPLICA IDENTITY) is its after
            -- image; a delete without one (REPLICA IDENTITY NOTHING) does not name its row
            when payload.op = 'd' and payload.before is null
                then 'delete without before image (PostgreSQL: REPLICA IDENTITY NOTHING)'
            when coalesce(nullif(payload.source.ts_ms, 0), nullif(payload.source.ts_sec, 0), payload.ts_ms) is null
                then 'DML without a time (source.ts_ms, source.ts_sec or ts_ms)'
            when undecodable_column is not null
                then concat(
                    'undecodable value in column ', undecodable_column, ' (',
                    coalesce(field_schemas[undecodable_column].name, field_schemas[undecodable_column].type), ')'
                )
            when {{ kafka_key_unreadable('kafka_key', 'key_map', 'key_columns') }}
                then {{ kafka_key_unreadable_reason() }}
            when {{ missing_key_column('key_image', 'key_columns') }} is not null
                then {{ missing_key_reason(
                    missing_key_column('key_image', 'key_columns'), 'database_name', 'table_name'
                ) }}
        end as reject_reason,
        -- the kind of an accepted record (raw_record_outcome)
        case
            when payload.ddl is not null or payload.op = 't' then 'ddl'
            when payload.op = 'm' then 'control'
            when payload.op is not null then 'dml'
            else 'control'
        end as accepted_kind
    from imaged

),

final as (

    select
        {{ raw_record_outcome('accepted_kind') | indent(8) }},
        payload.op,
        coalesce(lower(payload.source.snapshot) not in ('false', ''), false) as is_snapshot,
        coalesce(payload.source.name, payload.source.server, {{ topic_source_system('kafka_topic') }})
            as source_system,
        database_name,
        table_name,
        array_distinct(key_columns) as key_columns,
        before_image,
        after_image,
        -- the columns of the change's image (a delete's before, else its after) that the message
        -- does not carry: null in the image, taken by cdc_history from the key's previous version
        case when payload.op = 'd' then before_unknown else after_unknown end as unavailable_columns,
        column_types,
        struct(
            payload.source,
            payload.ts_ms,
            payload.databaseName,
            payload.schemaName,
            payload.ddl,
            payload.tableChanges,
            payload.position
        ) as msg
    from classified

)

select * from final
