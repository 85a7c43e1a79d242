{% test new_rejects(model) %}
    {%- set key = ['source_format', 'kafka_topic', 'kafka_partition', 'kafka_offset', 'message_in_record',
                   'landing_seq'] -%}
    {%- set baseline = none -%}
    {%- set changed = false -%}
    {%- if execute -%}
        {%- set started = run_started_at.strftime('%Y-%m-%d %H:%M:%S.%f') -%}
        {%- set snapshots = run_query(
            "select max_by(snapshot_id, if(committed_at <= timestamp'" ~ started ~ "', committed_at, null)), "
            ~ "count_if(committed_at > timestamp'" ~ started ~ "') from " ~ model ~ ".snapshots") -%}
        {%- set baseline = snapshots.columns[0].values()[0] -%}
        {%- set changed = (snapshots.columns[1].values()[0] | int) > 0 -%}
    {%- endif -%}
    select
        new_rejects.source_format,
        new_rejects.kafka_topic,
        new_rejects.kafka_partition,
        new_rejects.kafka_offset,
        new_rejects.reject_reason
    from {{ model }} as new_rejects
    {%- if not changed %}
    where false
    {%- elif baseline is not none %}
        left anti join {{ model }} version as of {{ baseline }} as earlier
            on
            {%- for column in key %}
                {{ 'and ' if not loop.first }}new_rejects.{{ column }} <=> earlier.{{ column }}
            {%- endfor %}
    {%- endif %}
{% endtest %}
