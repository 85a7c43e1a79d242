{% macro batch_source(source) %}
    {#- What an incremental write (MERGE or append) reads its batch from. dbt-spark puts the batch
        in a temporary view first, and making it analyses the whole model (a base model's decoding
        SQL: 4.4 s for the view alone). Where batch_read_inline says so, no view is made and the
        write reads the model's SQL inline. Where a view is made, it keeps its analysed plan
        (spark.sql.legacy.storeAnalyzedPlanForView, profiles.yml), so the write that reads it does
        not analyse the model again. -#}
    {%- if not batch_read_inline() -%}
        {{ return(source) }}
    {%- endif -%}
    {{ return('(\n' ~ model.compiled_code ~ '\n)') }}
{% endmacro %}


{% macro batch_read_inline() %}
    {#- True for an incremental model whose columns dbt does not compare with its table's before the
        write (`on_schema_change` is `ignore`; otherwise process_schema_changes describes the
        temporary view, which must exist). -#}
    {{ return(config.get('materialized') == 'incremental' and (config.get('on_schema_change') or 'ignore') == 'ignore') }}
{% endmacro %}
