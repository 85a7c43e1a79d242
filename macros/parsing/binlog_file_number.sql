{% macro binlog_file_number(file_name) %}
    {#- The number at the end of a binlog file name (`mysql-bin.000003` -> 3), as bigint, so
        positions order numerically across files; null when the name does not end in digits. For
        formats that send file and position as separate fields (see `binlog_position` for
        `<pos>@<file>` text). The digit run is matched from its first digit only (the look-behind),
        and without giving digits back: linear on any text. -#}
    try_cast(regexp_extract({{ file_name }}, '(?<![0-9])([0-9]++)$', 1) as bigint)
{%- endmacro %}
