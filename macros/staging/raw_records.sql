{% macro raw_records_since_last_build(fmt) %}
    {%- set raw = source('cdc_raw', 'raw_' ~ fmt) -%}
    {%- set watermark = landing_watermark() -%}
    select *
    from {{ raw }}
    where
        {{ without_set_aside_records(fmt, watermark) }}
        and {{ landed_since_last_build(raw, watermark) }}
        {{- tested_batch_note(watermark) }}
        {%- if var('cdc_fault_value_fails') %}
            {#- fault injection for the tests of cdc-lake set-aside: a record whose value holds this
                text fails the model, as a value no decoder foresaw would #}
            and (
                instr(coalesce(kafka_value, ''), {{ sql_string_literal(var('cdc_fault_value_fails')) }}) = 0
                or raise_error('injected fault (var cdc_fault_value_fails): this value fails') is null
            )
        {%- endif %}
{%- endmacro %}

{% macro without_set_aside_records(fmt, watermark) %}
    {#- the register by name, not source(): the model reads it at compile time only, and a unit
        test of the model would otherwise need it as an input -#}
    {%- set register = api.Relation.create(schema=raw_schema(), identifier='cdc_set_aside_records') -%}
    {#- `show tables` asks the metastore alone (load_relation describes every table of the schema).
        A build's on-run-start made the raw schema; a compile (sqlfluff's too) on a new lake asks first -#}
    {%- if not execute
           or (flags.WHICH not in ('run', 'build', 'retry') and not adapter.check_schema_exists(none, raw_schema()))
           or run_query("show tables in " ~ raw_schema() ~ " like 'cdc_set_aside_records'") | length == 0 -%}
        {{ return('true') }}
    {%- endif -%}
    {%- set found = run_query(
        "select kafka_topic, kafka_partition, kafka_offset, landing_seq from "
        ~ register ~ " where source_format = '" ~ fmt ~ "'"
        ~ " and landing_seq > " ~ (watermark | int)) -%}
    {%- set conditions = [] -%}
    {%- for row in found.rows -%}
        {%- do conditions.append(
            "(kafka_topic = " ~ sql_string_literal(row[0]) ~ " and kafka_partition = " ~ row[1]
            ~ " and kafka_offset = " ~ row[2] ~ " and landing_seq = " ~ row[3] ~ ")") -%}
    {%- endfor -%}
    {{ return('not (' ~ conditions | join(' or ') ~ ')' if conditions else 'true') }}
{%- endmacro %}

{% macro raw_record_outcome(accepted_kind, message_in_record='0') %}
    kafka_topic,
    kafka_partition,
    kafka_offset,
    kafka_timestamp,
    landed_at,
    landing_seq,
    {{ message_in_record }} as message_in_record,
    case
        when reject_reason = 'tombstone' then 'control'
        when reject_reason is not null then 'rejected'
        else {{ accepted_kind }}
    end as record_kind,
    case when reject_reason != 'tombstone' then reject_reason end as reject_reason,
    case when reject_reason != 'tombstone' then kafka_value end as rejected_value
{%- endmacro %}
