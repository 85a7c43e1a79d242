{% macro protected_columns_note() %}
    {#- a unit test gives its own options and records nothing -#}
    {%- if not execute or model.resource_type != 'model' -%}
        {{ return('') }}
    {%- endif -%}
    {%- set memo = build_memo() -%}
    {%- if memo.get('protected_columns_checked') -%}
        {{ return('') }}
    {%- endif -%}
    {%- do memo.update({'protected_columns_checked': true}) -%}
    {%- set options = cdc_table_options() -%}
    {%- set current = [] -%}
    {%- if options.protects_columns -%}
        {%- for entry in options.entries -%}
            {%- do current.append([entry.pattern, entry.exclude_columns | sort, entry.hash_columns | sort]) -%}
        {%- endfor -%}
    {%- endif -%}
    {%- set key = 'cdc_lake.protected_columns' -%}
    {%- set recorded = build_cache_get(key) -%}
    {#- a lake built before the options had none -#}
    {%- set built_under = fromjson(recorded) if recorded else [] -%}
    {%- set changelog = _cdc_model_relation('cdc_changelog') -%}
    {%- set rebuilt = changelog is none
        or (flags.FULL_REFRESH and ('model.' ~ project_name ~ '.cdc_changelog') in selected_resources) -%}
    {%- if rebuilt -%}
        {{ return(cache_note(key, current) if built_under != current else "") }}
    {%- endif -%}
    {%- if built_under != current -%}
        {%- do exceptions.warn(
            "cdc_table_options: the exclude_columns and hash_columns of the tables differ from those the"
            ~ " changes in cdc_changelog were decoded under (then " ~ tojson(built_under) ~ ", now "
            ~ tojson(current) ~ "): the stored changes, history and typed views keep the values they were"
            ~ " stored with. Rebuild them: dbt build --full-refresh --select cdc_changelog+"
            ~ " (docs/upgrading.md, \"Excluded or hashed columns on a table that holds data\")") -%}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}
