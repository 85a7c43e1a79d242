{% macro binlog_position(position_text) %}
    {#- Parse a binlog position written as `<offset>@<file>`, where <file> is a binlog file name
        (`6816@mysql-bin.000070`, KafkaRiverCanal) or a bare file number (`2196@4`, Tencent DTS),
        into struct<file_no:bigint, pos:bigint>. Both parts are numbers, so positions compare
        numerically (000070 > 000009). Null parts when the text does not have that shape. -#}
    named_struct(
        'file_no', try_cast(regexp_extract({{ position_text }}, '^\\s*[0-9]+\\s*@\\s*(?:.*?[^0-9])?([0-9]+)\\s*$', 1) as bigint),
        'pos', try_cast(regexp_extract({{ position_text }}, '^\\s*([0-9]+)\\s*@\\s*(?:.*?[^0-9])?[0-9]+\\s*$', 1) as bigint)
    )
{% endmacro %}


{% macro postgres_commit_lsn(sequence) %}
    {#- The first element of Debezium PostgreSQL's `source.sequence` (JSON text
        `["<last commit LSN>","<LSN>"]`) as bigint: the LSN of the last transaction committed before
        the change's own. It grows with every commit in the order PostgreSQL committed them, so
        ordering by it, then by the change's LSN, puts interleaved transactions in commit order.
        Null for other connectors and for a change before the first commit seen. -#}
    try_cast(get_json_object({{ sequence }}, '$[0]') as bigint)
{%- endmacro %}
