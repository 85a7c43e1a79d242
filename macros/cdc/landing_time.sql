{% macro landing_time(landing_seq_column='landing_seq') %}
    timestamp_micros({{ landing_seq_column }})
{%- endmacro %}
