{% macro spark__get_merge_sql(target, source, unique_key, dest_columns, incremental_predicates) %}
    {#- dbt-spark's MERGE for the `merge` incremental strategy, extended with two model configs:
        - merge_insert_only (bool): never update a matched row (first delivery wins), so a model
          whose rows are immutable facts (the change log) is not rewritten by re-deliveries;
        - merge_action_column (column name): the batch says per row what the MERGE does with it,
          'upsert' (update or insert) or 'delete' (delete the matched target row, never insert),
          so a model can remove rows it no longer produces. The column is the batch's, not the
          table's, like the change type of dbt's snapshot staging.
        Columns are listed explicitly from the target, so the source may carry helper columns.
        An empty batch writes nothing (see source_is_empty). -#}
    {%- if source_is_empty(source) -%}
        {{ return(empty_batch_statement(target)) }}
    {%- endif -%}
    {%- set predicates = [] if incremental_predicates is none else [] + incremental_predicates -%}
    {%- set dest_columns = adapter.get_columns_in_relation(target) -%}
    {#- dbt-spark answers none for "all columns" (it writes `set *`); list them instead -#}
    {%- set update_columns = get_merge_update_columns(
        config.get('merge_update_columns'), config.get('merge_exclude_columns'), dest_columns)
        or dest_columns | map(attribute='quoted') | list -%}
    {%- set insert_only = config.get('merge_insert_only', false) -%}
    {%- set action = config.get('merge_action_column') -%}
    {%- set keys = [unique_key] if unique_key is string else unique_key -%}
    {%- if not keys -%}
        {{ exceptions.raise_compiler_error("merge needs a unique_key on " ~ target) }}
    {%- endif -%}
    {%- for key in keys -%}
        {%- do predicates.append("DBT_INTERNAL_SOURCE." ~ key ~ " = DBT_INTERNAL_DEST." ~ key) -%}
    {%- endfor %}
    merge into {{ target }} as DBT_INTERNAL_DEST
    using {{ batch_source(source) }} as DBT_INTERNAL_SOURCE
    on {{ predicates | join('\n        and ') }}
    {%- if action %}
    when matched and DBT_INTERNAL_SOURCE.{{ action }} = 'delete' then delete
    {%- endif %}
    {%- if not insert_only %}
    when matched then update set
        {%- for column_name in update_columns %}
        {{ column_name }} = DBT_INTERNAL_SOURCE.{{ column_name }}{{ "," if not loop.last }}
        {%- endfor %}
    {%- endif %}
    when not matched {%- if action %} and DBT_INTERNAL_SOURCE.{{ action }} = 'upsert'{% endif %} then insert
        ({{ dest_columns | map(attribute='quoted') | join(', ') }})
        values ({% for column in dest_columns %}DBT_INTERNAL_SOURCE.{{ column.quoted }}{{ ", " if not loop.last }}{% endfor %})
{% endmacro %}
