{% macro spark__create_temporary_view(relation, compiled_code) -%}
    {#- The temporary view dbt-spark's incremental materialization makes of a model's batch before
        it merges or appends it, skipped when the batch is marked empty (batch_marked_empty): the
        write that would read it is skipped too (source_is_empty), and creating the view has
        Spark analyse the whole model, 1-3 s per model and build even when no row is read. A model
        that appends new columns (`on_schema_change` other than `ignore`) needs a view, since dbt
        compares its columns with the table's before the write: for an empty batch it gets one of
        its own table with no rows, so nothing changes, and a column new in the model's SQL is
        added by the next build whose batch has rows (cdc_changelog: 2-5 s less per no-op build on
        the demo lake, on the path every later model waits for). A model with a batch and no such
        comparison gets no view either: its write reads the batch's SQL inline (batch_source). -#}
    {%- set empty = batch_marked_empty() -%}
    {%- set inline = batch_read_inline() and compiled_code == model.get('compiled_code') -%}
    {%- if empty and not inline and config.get('materialized') == 'incremental' -%}
        create or replace temporary view {{ relation }} as
        select * from {{ this }} where false
    {%- elif empty -%}
        select 'batch is empty: no temporary view {{ relation }}' as skipped
    {%- elif inline -%}
        select 'the write reads the batch inline (batch_source): no temporary view {{ relation }}' as skipped
    {%- else -%}
        create or replace temporary view {{ relation }} as
        {{ compiled_code }}
    {%- endif -%}
{%- endmacro %}
