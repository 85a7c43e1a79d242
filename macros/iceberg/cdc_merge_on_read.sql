{% macro cdc_merge_on_read() %}
    {#- Iceberg table properties for the tables the incremental MERGEs update in place
        (cdc_history): updated and deleted rows are recorded in delete files instead of
        rewriting every data file they sit in, so a MERGE costs in proportion to the rows it changes.
        Readers apply the delete files; `dbt run-operation cdc_compact` folds them back in. -#}
    {{ return({
        'format-version': '2',
        'write.merge.mode': 'merge-on-read',
        'write.update.mode': 'merge-on-read',
        'write.delete.mode': 'merge-on-read',
    }) }}
{% endmacro %}
