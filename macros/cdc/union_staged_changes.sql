{% macro union_staged_changes() %}
    {%- for fmt in cdc_formats() %}
    select
        {{ canonical_columns('staged_changes', relation='staged') | indent(8) }},
        staged.source_dialect
    from {{ ref('stg_' ~ fmt ~ '__changes') }} as staged
    {%- if not loop.last %}
    union all
    {%- endif %}
    {%- endfor %}
{% endmacro %}
