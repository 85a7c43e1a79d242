{% macro change_id(parts) %}
    md5(concat_ws('\u001f'{% for part in parts %}, cast({{ part }} as string){% endfor %}))
{% endmacro %}
