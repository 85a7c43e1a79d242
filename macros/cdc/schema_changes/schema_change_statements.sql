{% macro schema_change_statements() %}
    {{ return(ref('cdc_schema_changes')) }}
{% endmacro %}
