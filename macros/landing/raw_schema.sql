{% macro raw_schema() %}
    {#- Schema of the raw landed tables: CDC_LAKE_RAW_SCHEMA, as for `cdc-lake land`. -#}
    {{ return(env_var('CDC_LAKE_RAW_SCHEMA', 'cdc_raw')) }}
{% endmacro %}
