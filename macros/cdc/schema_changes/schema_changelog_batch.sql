{% macro schema_changelog_batch(fmt=none) %}
    {#- the landings of cdc_changelog's last batch (its tested-batch record); all, before its first
        incremental build -#}
    {%- set changelog = ref('cdc_changelog') -%}
    {%- set record = tested_batch_record(changelog)
        if execute and load_relation(changelog) is not none else none -%}
    {%- set after = (record.get('own', record['after']) if record is not none else none) or {} -%}
    {%- if fmt is not none -%}
        {{ return('landing_seq > ' ~ after.get(fmt, -1)) }}
    {%- endif -%}
    {{ return(landed_after(after)) }}
{% endmacro %}
