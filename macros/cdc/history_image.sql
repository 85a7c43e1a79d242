{% macro history_image(changes) %}
    {#- The image a change leaves its row identity in, for cdc_history: the after image, or for a
        delete the before image (a keyless row that loses one of several identical copies keeps
        that image). `changes` is the alias of a change-log relation. -#}
    case when {{ changes }}.op = 'd' then {{ changes }}.before else {{ changes }}.after end
{%- endmacro %}


{% macro keyless_row_delta(changes) %}
    {#- How a change moves the number of identical rows of a keyless table: +1 for an insert or
        snapshot read, -1 for a delete, 0 for an update that leaves the image as it was (other
        updates of keyless rows were split into a delete and an insert). Null for keyed rows.
        `changes` is the alias of a change-log relation. -#}
    case
        when not {{ changes }}.is_keyless then null
        when {{ changes }}.op = 'd' then -1
        when {{ changes }}.op = 'u' then 0
        else 1
    end
{%- endmacro %}
