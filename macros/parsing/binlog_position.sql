{% macro binlog_position(position_text) %}
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
    try_cast(get_json_object({{ sequence }}, '$[0]') as bigint)
{%- endmacro %}
