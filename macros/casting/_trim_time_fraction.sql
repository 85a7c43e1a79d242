{% macro _trim_time_fraction(text) %}
    regexp_replace({{ text }}, '(\\.[0-9]*[1-9])0+$|\\.0*$', '$1')
{% endmacro %}
