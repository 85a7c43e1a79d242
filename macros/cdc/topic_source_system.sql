{% macro topic_source_system(topic_column) %}
    {%- set mapping = var('source_system_by_topic', {}) -%}
    {%- if mapping -%}
        case {{ topic_column }}
        {%- for topic, system in mapping.items() %}
            when {{ sql_string_literal(topic) }} then {{ sql_string_literal(system) }}
        {%- endfor %}
            else {{ topic_column }}
        end
    {%- else -%}
        {{ topic_column }}
    {%- endif -%}
{% endmacro %}
