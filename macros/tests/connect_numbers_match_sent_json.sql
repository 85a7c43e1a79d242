{% test connect_numbers_match_sent_json(model, raw) %}
    {%- set first_landing = none -%}
    {%- if execute -%}
        {%- set first_landing = run_query(
            "select min(landing_seq) from " ~ model ~ " where source_format = 'debezium'").columns[0].values()[0] -%}
    {%- endif -%}
    with sent as (

        select
            kafka_topic,
            kafka_partition,
            kafka_offset,
            landing_seq,
            coalesce(
                get_json_object(kafka_value, '$.payload.after'), get_json_object(kafka_value, '$.after')
            ) as after_json
        from {{ raw }}
        where
            kafka_value is not null
            and {{ 'false' if first_landing is none else 'landing_seq >= ' ~ first_landing }}

    ),

    sent_numbers as (

        -- `"column": <number>` pairs of the after object; a nested struct's fields are never
        -- columns of the change, so the join below leaves them out
        select
            sent.kafka_topic,
            sent.kafka_partition,
            sent.kafka_offset,
            sent.landing_seq,
            pair.column_name,
            pair.number_text
        from sent
        lateral view inline(arrays_zip(
            regexp_extract_all(sent.after_json, '"([^"\\\\]+)"\\s*:\\s*(-?[0-9][0-9.eE+-]*)', 1),
            regexp_extract_all(sent.after_json, '"([^"\\\\]+)"\\s*:\\s*(-?[0-9][0-9.eE+-]*)', 2)
        )) pair as column_name, number_text
        where sent.after_json is not null

    ),

    kept as (

        select
            sent_numbers.*,
            changes.after[sent_numbers.column_name] as kept_value,
            changes.column_types[sent_numbers.column_name] as column_type
        from sent_numbers
        inner join {{ model }} as changes
            on
                changes.source_format = 'debezium'
                and changes.kafka_topic = sent_numbers.kafka_topic
                and changes.kafka_partition = sent_numbers.kafka_partition
                and changes.kafka_offset = sent_numbers.kafka_offset
                and changes.landing_seq = sent_numbers.landing_seq
        where changes.op != 'd'

    )

    select *
    from kept
    where
        lower(column_type) rlike '^(tinyint|smallint|mediumint|int|integer|bigint|decimal|numeric|float|double|real|year)'
        and case
            when lower(column_type) rlike '^float'
                then cast(number_text as float) is distinct from cast(kept_value as float)
            else cast(number_text as double) is distinct from cast(kept_value as double)
        end
{% endtest %}
