{% macro join_on_keys(left, right, keys) %}
    {#- `left.k1 = right.k1 and left.k2 = right.k2 ...`: the join condition on a composite key. -#}
    {%- for key in keys -%}
        {{ left }}.{{ key }} = {{ right }}.{{ key }}{{ ' and ' if not loop.last }}
    {%- endfor -%}
{% endmacro %}


{% macro qualified_columns(relation, columns) %}
    {#- `relation.c1, relation.c2, ...`: a composite key's columns taken from one side of a join. -#}
    {%- for column in columns -%}
        {{ relation }}.{{ column }}{{ ', ' if not loop.last }}
    {%- endfor -%}
{% endmacro %}
