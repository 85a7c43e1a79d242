{% macro cdc_forget_passes() %}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- set forgotten = {} -%}
    {%- set tables = [] -%}
    {%- set cache = load_relation(build_cache_relation()) -%}
    {%- if cache is not none -%}
        {%- do tables.append(cache) -%}
    {%- endif -%}
    {%- for node in graph.nodes.values()
           if node.resource_type in ('model', 'seed') and node.package_name == project_name -%}
        {%- set relation = adapter.get_relation(node.database, node.schema, node.alias) -%}
        {%- if relation is not none and relation.is_table -%}
            {%- do tables.append(relation) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set held = [] -%}
    {%- for relation in tables -%}
        {%- set keys = [] -%}
        {%- for name, value in run_query('show tblproperties ' ~ relation) if name.startswith('cdc_lake.') -%}
            {%- do keys.append(sql_string_literal(name)) -%}
            {#- counted by kind: `cdc_lake.pass`, `cdc_lake.tested_batch`, ... -#}
            {%- set kind = name.split('.')[:2] | join('.') -%}
            {%- do forgotten.update({kind: forgotten.get(kind, 0) + 1}) -%}
        {%- endfor -%}
        {%- if keys -%}
            {%- do run_query('alter table ' ~ relation ~ ' unset tblproperties if exists (' ~ keys | join(', ') ~ ')') -%}
            {%- do held.append(relation) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set counts = [] -%}
    {%- for kind, count in forgotten | dictsort -%}
        {%- do counts.append(count ~ ' ' ~ kind) -%}
    {%- endfor -%}
    {%- do log('cdc_forget_passes: forgot ' ~ (counts | join(', ') if counts else 'nothing (no record kept)')
               ~ ' on ' ~ held | length ~ ' of ' ~ tables | length ~ ' tables; the next dbt build runs every data test on whole tables'
               ~ ' and reloads every seed', info=true) -%}
{% endmacro %}
