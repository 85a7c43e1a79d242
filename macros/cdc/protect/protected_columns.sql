{% macro protected_columns(expression, of='image', key_columns='key_columns', database_name='database_name',
                           table_name='table_name') %}
    {%- if of not in ('image', 'types', 'names') -%}
        {{ exceptions.raise_compiler_error(
            "protected_columns: `of` is image, types or names, got " ~ of) }}
    {%- endif -%}
    {%- set options = cdc_table_options() -%}
    {%- if not options.protects_columns -%}
        {{ return(expression) }}
    {%- endif -%}
    {%- set branches = [] -%}
    {%- for entry in options.entries -%}
        {%- do branches.append(_protected_columns_of_entry(
            expression, of, entry.exclude_columns, entry.hash_columns, key_columns)) -%}
    {%- endfor -%}
    {{ return(_cdc_table_option_case(options, branches, expression, database_name, table_name)) }}
{% endmacro %}

{% macro _protected_columns_of_entry(expression, of, excluded, hashed, key_columns) %}
    {%- if not excluded and not hashed -%}
        {{ return(expression) }}
    {%- endif -%}
    {#- names compare in lower case: a column is protected whatever case a message spells it in -#}
    {%- set listed, dropped = [], [] -%}
    {%- for name in excluded + hashed -%}
        {%- do listed.append(sql_string_literal(name)) -%}
        {%- if name in excluded -%}
            {%- do dropped.append(sql_string_literal(name)) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set listed = "array(" ~ listed | join(', ') ~ ")" -%}
    {%- set dropped = "array(" ~ dropped | join(', ') ~ ")" -%}
    {#- an excluded key column stays, hashed: it must still identify its row -#}
    {%- set stays = "not array_contains(" ~ dropped ~ ", lower(pii_col))"
        ~ " or array_contains(" ~ key_columns ~ ", pii_col)" -%}
    {%- if of == 'names' -%}
        {{ return(expression if not excluded else "filter(" ~ expression ~ ", pii_col -> " ~ stays ~ ")") }}
    {%- endif -%}
    {%- set filtered = expression if not excluded
        else "map_filter(" ~ expression ~ ", (pii_col, pii_val) -> " ~ stays ~ ")" -%}
    {%- set protected_value = "'char(64)'" if of == 'types' else _hmac_sha256('pii_val') -%}
    {{ return("transform_values(" ~ filtered ~ ", (pii_col, pii_val) -> if(array_contains(" ~ listed
              ~ ", lower(pii_col)), " ~ protected_value ~ ", pii_val))") }}
{% endmacro %}
