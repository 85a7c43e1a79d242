{% macro spark__create_temporary_view(relation, compiled_code) %}
    {#- dbt-spark's temporary view of an incremental model's batch. When the model's batch markers
        say the batch is empty (landed_since_last_build), the view is the model's own table with
        no rows instead of the model's SQL: Spark analyzes a view's SQL when the view is created,
        which for the large staging models costs seconds (base_debezium__messages: 4.4 s) on every
        build that brings no record of their format, and nothing reads an empty batch but
        source_is_empty, which then skips the write. -#}
    {%- if batch_marker_says(model.get('compiled_code') or '') == 'empty' %}
    create or replace temporary view {{ relation }} as
        select * from {{ this }} where false
    {%- else %}
    create or replace temporary view {{ relation }} as
        {{ compiled_code }}
    {%- endif %}
{% endmacro %}
