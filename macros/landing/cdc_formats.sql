{% macro cdc_formats() %}
    {#- The five source formats; the same words are the raw table suffixes and `source_format`. -#}
    {{ return(['kafka_river_canal', 'debezium', 'canal_flat', 'tencent_dts', 'lindorm']) }}
{% endmacro %}
