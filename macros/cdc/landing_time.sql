{% macro landing_time(landing_seq_column='landing_seq') %}
    {#- When a record was landed, from its landing commit's `landing_seq` (microseconds since the
        epoch, taken under the landing lock): the one definition of "landed at" that cdc_lag and
        cdc_reconciliation share. One value per commit, so every record of a landing run has the
        same landing time, whichever path landed it. -#}
    timestamp_micros({{ landing_seq_column }})
{%- endmacro %}
