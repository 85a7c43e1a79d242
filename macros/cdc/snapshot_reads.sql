{% macro is_snapshot_read(source_position) %}
    ({{ source_position }} like '% row % snapshot %')
{%- endmacro %}

{% macro snapshot_marker(source_position) %}
    case
        when {{ is_snapshot_read(source_position) }}
            then substring_index({{ source_position }}, ' snapshot ', -1)
    end
{%- endmacro %}

{% macro snapshot_position(source_position) %}
    case
        when {{ is_snapshot_read(source_position) }}
            then substring_index({{ source_position }}, ' row ', 1)
    end
{%- endmacro %}

{% macro snapshot_order(source_position, change_order) %}
    case
        when
            {{ is_snapshot_read(source_position) }}
            and {{ source_position }} not like '% snapshot incremental'
            -- PostgreSQL's snapshot rows carry no commit LSN (they sort before the stream), an
            -- embedded engine's no binlog position: neither can be placed against the stream
            and {{ source_position }} not like 'lsn %'
            and {{ source_position }} not like ':%'
            then substring_index({{ change_order }}, '.', 2)
    end
{%- endmacro %}
