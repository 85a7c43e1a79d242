{% macro topic_source_system(topic_column) %}
    {#- Source system for formats that do not name their server (Canal, KafkaRiverCanal): the
        `source_system_by_topic` var maps topics to names; unmapped topics stand for themselves. -#}
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
