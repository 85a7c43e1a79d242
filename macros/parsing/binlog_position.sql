{% macro binlog_position(position_text) %}
    {#- Parse a binlog position written as `<offset>@<file>`, where <file> is a binlog file name
        (`6816@mysql-bin.000070`, KafkaRiverCanal) or a bare file number (`2196@4`, Tencent DTS),
        into struct<file_no:bigint, pos:bigint>. Both parts are numbers, so positions compare
        numerically (000070 > 000009). Null parts when the text does not have that shape: the
        offset all digits, the file ending in digits (spaces around either are allowed). Split on
        the first `@` with string functions: a single pattern for the whole text backtracked
        quadratically on a long one. `position_text` is repeated: pass a column. -#}
    {%- set at = "instr(" ~ position_text ~ ", '@')" -%}
    {%- set offset_part = "trim(substr(" ~ position_text ~ ", 1, " ~ at ~ " - 1))" -%}
    {%- set file_part = "trim(substr(" ~ position_text ~ ", " ~ at ~ " + 1))" -%}
    {%- set has_shape = at ~ " > 0 and " ~ offset_part ~ " rlike '^[0-9]+$' and " ~ file_part ~ " rlike '[0-9]$'" -%}
    named_struct(
        'file_no', case when {{ has_shape }} then
            try_cast(regexp_extract({{ file_part }}, '(?<![0-9])([0-9]++)$', 1) as bigint)
        end,
        'pos', case when {{ has_shape }} then try_cast({{ offset_part }} as bigint) end
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
