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
