{% macro cdc_columns(shape) %}
    {%- set row_key = [
        ['source_system', 'string'], ['database_name', 'string'], ['table_name', 'string'],
        ['row_key', 'string'],
    ] -%}
    {%- set kafka = [['kafka_topic', 'string'], ['kafka_partition', 'int'], ['kafka_offset', 'bigint']] -%}
    {%- set shapes = {
        'staged_changes': [['change_id', 'string'], ['source_format', 'string']] + row_key[:3] + [
            ['op', 'string'], ['key_columns', 'array<string>'], ['row_key', 'string'],
            ['primary_key', 'map<string,string>'], ['before', 'map<string,string>'],
            ['after', 'map<string,string>'], ['unavailable_columns', 'array<string>'],
            ['column_types', 'map<string,string>'],
            ['commit_ts', 'timestamp'], ['capture_ts', 'timestamp'], ['change_order', 'string'],
            ['source_position', 'string'], ['gtid', 'string']] + kafka + [
            ['row_in_message', 'int'], ['landing_seq', 'bigint'],
        ],
        'raw_records': [['source_format', 'string']] + kafka + [
            ['message_in_record', 'int'], ['landing_seq', 'bigint'], ['landed_at', 'timestamp'],
            ['database_name', 'string'], ['table_name', 'string'], ['record_kind', 'string'],
            ['reject_reason', 'string'], ['rejected_value', 'string'],
        ],
        'staged_schema_changes': [['schema_change_id', 'string'], ['source_format', 'string']]
            + row_key[:3] + [
            ['ddl_type', 'string'], ['ddl_statement', 'string'], ['commit_ts', 'timestamp'],
            ['change_order', 'string'], ['source_position', 'string'], ['gtid', 'string']] + kafka + [
            ['landing_seq', 'bigint'],
        ],
        'staged_heartbeats': [['source_format', 'string'], ['source_system', 'string']] + kafka + [
            ['heartbeat_ts', 'timestamp'], ['landing_seq', 'bigint'],
        ],
        'history_changes': row_key + [
            ['source_format', 'string'], ['primary_key', 'map<string,string>'], ['op', 'string'],
            ['image', 'map<string,string>'], ['unavailable_columns', 'array<string>'],
            ['is_keyless', 'boolean'], ['row_delta', 'int'],
            ['change_order', 'string'], ['change_id', 'string'], ['commit_ts', 'timestamp'],
            ['batch_landing_seq', 'bigint'], ['floor_ts', 'timestamp'], ['is_open_version', 'boolean'],
            ['snapshot_order', 'string'],
        ],
        'cdc_history': [['version_id', 'string'], ['source_format', 'string']] + row_key + [
            ['primary_key', 'map<string,string>'], ['image', 'map<string,string>'],
            ['unknown_columns', 'array<string>'], ['valid_from', 'timestamp'], ['valid_to', 'timestamp'],
            ['is_current', 'boolean'],
            ['is_latest', 'boolean'], ['op', 'string'], ['change_id', 'string'], ['change_order', 'string'],
            ['closed_by_delete', 'boolean'], ['closing_change_id', 'string'], ['closing_op', 'string'],
            ['closing_change_order', 'string'], ['closing_image', 'map<string,string>'],
            ['is_keyless', 'boolean'], ['row_count', 'bigint'], ['last_landing_seq', 'bigint'],
        ],
    } -%}
    {%- if shape not in shapes -%}
        {{ exceptions.raise_compiler_error(
            "cdc_columns: unknown shape '" ~ shape ~ "'; one of " ~ (shapes.keys() | sort | join(', '))) }}
    {%- endif -%}
    {{ return(shapes[shape]) }}
{% endmacro %}

{% macro cdc_row_key_columns() %}
    {{ return(['source_system', 'database_name', 'table_name', 'row_key']) }}
{% endmacro %}

{% macro canonical_columns(shape, relation=none, values={}, only=none, merge_action=none) %}
    {%- set columns = cdc_columns(shape) -%}
    {%- set names = columns | map('first') | list -%}
    {%- for name in (values.keys() | list) + (only or []) if name not in names -%}
        {{ exceptions.raise_compiler_error(
            "canonical_columns: '" ~ name ~ "' is not a column of " ~ shape ~ " (" ~ names | join(', ') ~ ")") }}
    {%- endfor -%}
    {%- set items = [] -%}
    {%- for name, type in columns -%}
        {%- if name in values and values[name] is not none -%}
            {%- do items.append(values[name] ~ ' as ' ~ name) -%}
        {%- elif name not in values and relation is not none and (only is none or name in only) -%}
            {%- do items.append(relation ~ '.' ~ name) -%}
        {%- else -%}
            {%- do items.append('cast(null as ' ~ type ~ ') as ' ~ name) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if merge_action is not none -%}
        {%- do items.append(merge_action ~ ' as merge_action') -%}
    {%- endif -%}
    {{ return(items | join(',\n')) }}
{% endmacro %}

{% macro copied_row_values(flag, copy_values, values={}, relation=none) %}
    {%- set merged = values.copy() -%}
    {%- for column, value in copy_values.items() -%}
        {%- do merged.update({column: 'if(' ~ flag ~ ', ' ~ value ~ ', '
                              ~ values.get(column, relation ~ '.' ~ column) ~ ')'}) -%}
    {%- endfor -%}
    {{ return(merged) }}
{% endmacro %}

{% macro union_staged(kind) %}
    {%- set formats = cdc_formats() if kind == 'changes' else cdc_formats(carrying=kind) -%}
    {%- for fmt in formats %}
    select
        {{ canonical_columns('staged_' ~ kind, relation='staged') | indent(8) }}
    from {{ ref('stg_' ~ fmt ~ '__' ~ kind) }} as staged
    {%- if not loop.last %}
    union all
    {%- endif %}
    {%- endfor %}
{% endmacro %}

{% macro staged_from(kind) %}
    {%- set tables = {} -%}
    {%- for fmt in (cdc_formats() if kind == 'changes' else cdc_formats(carrying=kind)) -%}
        {%- do tables.update({fmt: ref('base_' ~ fmt ~ '__messages')}) -%}
    {%- endfor -%}
    {{ return(tables) }}
{% endmacro %}
