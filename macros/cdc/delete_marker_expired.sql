{% macro delete_marker_expired(commit_ts, retention_days) %}
    {#- True when a delete committed at `commit_ts` is older than `retention_days` days (the
        optional `cdc_delete_retention_days` var of cdc_current). -#}
    ({{ commit_ts }} < current_timestamp() - make_interval(0, 0, 0, {{ retention_days | int }}))
{% endmacro %}
