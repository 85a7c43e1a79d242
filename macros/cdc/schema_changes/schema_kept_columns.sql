{% macro schema_kept_columns(column, kind='map') %}
    {#- a change's column under mode ignore_new_columns: the accepted columns only -#}
    {%- if kind == 'map' -%}
        case
            when schema_mode = 'ignore_new_columns'
                then map_filter({{ column }}, (k, v) -> array_contains(accepted_columns, k))
            else {{ column }}
        end
    {%- else -%}
        case
            when schema_mode = 'ignore_new_columns'
                then filter({{ column }}, c -> array_contains(accepted_columns, c))
            else {{ column }}
        end
    {%- endif -%}
{% endmacro %}
