{% macro schema_kept_columns(column, kind='map') %}
    {%- set kept = 'map_filter(' ~ column ~ ', (k, v) -> array_contains(accepted_columns, k))' if kind == 'map'
        else 'filter(' ~ column ~ ', c -> array_contains(accepted_columns, c))' -%}
    {{ return("case\n    when schema_mode = 'ignore_new_columns'\n        then " ~ kept
              ~ "\n    else " ~ column ~ "\nend") }}
{% endmacro %}
