{% macro spark__list_relations_without_caching(relation) %}
    {#- dbt-spark's relation listing (`show table extended`), with `Provider: iceberg` for Iceberg
        tables: under SparkSessionCatalog + a Hive metastore Spark prints `Provider: hive`, so
        dbt-spark would not know the snapshot table is Iceberg and refuses the second snapshot.
        The rewritten rows are returned through a VALUES query (same four columns). -#}
    {%- call statement('list_relations_without_caching', fetch_result=True) -%}
        show table extended in {{ relation.schema }} like '*'
    {%- endcall -%}
    {%- set listed = load_result('list_relations_without_caching').table -%}
    {%- set rows = [] -%}
    {%- for row in listed -%}
        {%- set info = row[3] -%}
        {%- if 'table_type=ICEBERG,' in info or 'table_type=ICEBERG]' in info -%}
            {%- set info = info.replace('Provider: hive', 'Provider: iceberg') -%}
        {%- endif -%}
        {%- do rows.append('(' ~ _peer_sql_string(row[0]) ~ ', ' ~ _peer_sql_string(row[1]) ~ ', '
            ~ (row[2] | string | lower) ~ ', ' ~ _peer_sql_string(info) ~ ')') -%}
    {%- endfor -%}
    {%- if not rows -%}
        {{ return(listed) }}
    {%- endif -%}
    {%- call statement('list_relations_rewritten', fetch_result=True) -%}
        select * from values {{ rows | join(', ') }} as listed(namespace, tableName, isTemporary, information)
    {%- endcall -%}
    {{ return(load_result('list_relations_rewritten').table) }}
{% endmacro %}
