{% macro _typed_metadata_columns() %}
    {{- return([
        'version_id', 'source_system', 'row_key', 'op', 'commit_ts', 'change_order', 'change_id',
        'valid_from', 'valid_to', 'is_current', 'closed_by_delete', 'last_landing_seq',
    ]) -}}
{% endmacro %}
