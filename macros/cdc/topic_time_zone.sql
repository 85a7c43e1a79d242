{% macro topic_time_zone(topic_column) %}
    {%- set default = var('source_time_zone', 'UTC') -%}
    {%- set mapping = var('source_time_zone_by_topic', {}) -%}
    {%- for zone in [default] + (mapping.values() | list) -%}
        {%- if zone is not string or not zone -%}
            {{ exceptions.raise_compiler_error(
                "vars source_time_zone and source_time_zone_by_topic: a time zone is a name such as "
                ~ "'Asia/Shanghai', got " ~ zone) }}
        {%- endif -%}
    {%- endfor -%}
    {%- if mapping and topic_column is not none -%}
        case {{ topic_column }}
        {%- for topic, zone in mapping.items() %}
            when {{ sql_string_literal(topic) }} then {{ sql_string_literal(zone) }}
        {%- endfor %}
            else {{ sql_string_literal(default) }}
        end
    {%- else -%}
        {{ sql_string_literal(default) }}
    {%- endif -%}
{% endmacro %}
