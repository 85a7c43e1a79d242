{% macro change_order(parts) %}
    {#- A sortable text key from non-negative integer parts, most significant first. Each part is
        zero-padded to 19 digits (the width of a bigint), so text order equals numeric order:
        comparing binlog positions as unpadded text is the bug that made Hudi keep the wrong row. -#}
    {%- if parts | length == 0 -%}
        {{ exceptions.raise_compiler_error("change_order needs at least one part") }}
    {%- endif -%}
    concat_ws('.'
    {%- for part in parts %}, lpad(cast(coalesce({{ part }}, 0) as string), 19, '0'){% endfor -%}
    )
{% endmacro %}
