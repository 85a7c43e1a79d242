{% macro change_id(parts) %}
    {#- Deterministic id of a row change from the expressions that identify it at the source
        (format, system, table, source position, row key). Re-deliveries get the same id. -#}
    md5(concat_ws('\u001f'{% for part in parts %}, cast({{ part }} as string){% endfor %}))
{% endmacro %}
