{% macro raw_schema() %}
    {{ return(env_var('CDC_LAKE_RAW_SCHEMA', 'cdc_raw')) }}
{% endmacro %}
