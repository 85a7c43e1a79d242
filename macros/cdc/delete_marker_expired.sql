{% macro delete_marker_expired(commit_ts, retention_days) %}
    ({{ commit_ts }} < current_timestamp() - make_interval(0, 0, 0, {{ retention_days | int }}))
{% endmacro %}
