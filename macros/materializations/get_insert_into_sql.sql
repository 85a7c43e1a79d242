{% macro get_insert_into_sql(source_relation, target_relation) %}
    {#- dbt-spark's `append` statement, skipped when the batch is empty (see source_is_empty). -#}
    {%- if source_is_empty(source_relation) -%}
        {{ empty_batch_statement(target_relation) }}
    {%- else -%}
        {%- set dest_columns = adapter.get_columns_in_relation(target_relation) -%}
        insert into table {{ target_relation }}
        select {{ dest_columns | map(attribute='quoted') | join(', ') }}
        from {{ batch_source(source_relation) }} as batch
    {%- endif -%}
{% endmacro %}
