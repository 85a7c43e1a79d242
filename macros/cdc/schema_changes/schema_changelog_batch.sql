{% macro schema_changelog_batch() %}
    {#- the landings of cdc_changelog's last batch (its tested-batch record); all, before its first
        incremental build -#}
    {%- set changelog = ref('cdc_changelog') -%}
    {%- set record = tested_batch_record(changelog)
        if execute and load_relation(changelog) is not none else none -%}
    {%- set after = (record.get('own', record['after']) if record is not none else none) or {} -%}
    {#- the formats with staged messages in it: the others' branches of the union are pruned -#}
    {%- set staged = staged_from('changes') -%}
    {%- set landed = staged.keys() | list -%}
    {%- if execute -%}
        {%- set probes = [] -%}
        {%- for name, table in staged | dictsort if load_relation(table) is not none -%}
            {%- do probes.append("select '" ~ name ~ "' as source_format from (select 1 from " ~ table
                ~ " where landing_seq > " ~ after.get(name, -1) ~ " limit 1) as probe") -%}
        {%- endfor -%}
        {%- if probes | length == staged | length -%}
            {%- set landed = run_query(probes | join(' union all ')).columns[0].values() | list -%}
        {%- endif -%}
    {%- endif -%}
    {%- set raw = {} -%}
    {%- for name in staged -%}
        {%- do raw.update({name: 'landing_seq > ' ~ after.get(name, -1) if name in landed else 'false'}) -%}
    {%- endfor -%}
    {{ return({
        'changes': (landed_after(after) ~ " and source_format in ('" ~ landed | join("', '") ~ "')")
            if landed else 'false',
        'raw': raw,
    }) }}
{% endmacro %}
