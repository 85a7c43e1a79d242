{% macro typed_columns(database_name, table_name) %}
    {%- for name in [database_name, table_name] -%}
        {%- if name is not string or not name -%}
            {{ exceptions.raise_compiler_error(
                "typed_columns: database_name and table_name must be non-empty strings, got "
                ~ database_name ~ ", " ~ table_name) }}
        {%- endif -%}
    {%- endfor -%}
    {%- set columns_model = ref('cdc_typed_columns') -%}
    {%- set tables_seed = ref('cdc_tables') -%}
    {%- if not execute -%}
        {{ return([]) }}
    {%- endif -%}
    {%- set where_table = "database_name = " ~ sql_string_literal(database_name)
        ~ " and table_name = " ~ sql_string_literal(table_name) -%}
    {#- the relations themselves, not ref(): under `--empty` a ref renders as an empty subquery -#}
    {%- set tables_relation = load_relation(tables_seed) -%}
    {%- set columns_relation = load_relation(columns_model) -%}
    {%- if tables_relation is none -%}
        {{ return([]) }}
    {%- endif -%}
    {#- the list is kept in the build cache, under the versions of what cdc_typed_columns reads:
        while they are unchanged, four catalog reads instead of a query over the view (2-3 s) -#}
    {%- set cache_key = 'cdc_lake.typed_columns.' ~ database_name ~ '.' ~ table_name -%}
    {%- set inputs = input_versions(['model.' ~ project_name ~ '.cdc_typed_columns'])
        if columns_relation is not none else none -%}
    {%- set cached = build_cache_get(cache_key) if inputs is not none else none -%}
    {%- if cached is not none and fromjson(cached)['inputs'] == local_md5(inputs | join('\n')) -%}
        {{ return(fromjson(cached)['columns']) }}
    {%- endif -%}
    {#- one query: is the table listed, and its columns (none while cdc_typed_columns is missing) -#}
    {%- set typed_query = "select column_name, spark_type, mysql_type, column_position from "
        ~ columns_relation ~ " where " ~ where_table
        if columns_relation is not none
        else "select null as column_name, null as spark_type, null as mysql_type, null as column_position where false" -%}
    {%- set result = run_query(
        "select listed.tables_listed, typed.* from (select count(*) as tables_listed from " ~ tables_relation
        ~ " where " ~ where_table ~ ") as listed left join (" ~ typed_query ~ ") as typed on true"
        ~ " order by typed.column_position") -%}
    {%- if result.rows | length == 0 or result.rows[0]['tables_listed'] | int == 0 -%}
        {{ exceptions.raise_compiler_error(
            database_name ~ "." ~ table_name ~ " is not listed in seeds/cdc_tables.csv: add the line "
            ~ "(`cdc-lake add-table " ~ database_name ~ " " ~ table_name ~ "` does it) and run `dbt build`") }}
    {%- endif -%}
    {%- set columns = [] -%}
    {%- for row in result.rows if row['column_name'] is not none -%}
        {%- do columns.append({
            'column_name': row['column_name'],
            'spark_type': row['spark_type'],
            'mysql_type': row['mysql_type'],
        }) -%}
    {%- endfor -%}
    {{ return(columns) }}
{% endmacro %}

{% macro typed_columns_note(database_name, table_name, columns) %}
    {#- a unit test gives the column list itself (overrides) and writes nothing -#}
    {%- if not execute or model.resource_type != 'model' or load_relation(ref('cdc_typed_columns')) is none -%}
        {{ return('') }}
    {%- endif -%}
    {%- set inputs = input_versions(['model.' ~ project_name ~ '.cdc_typed_columns']) -%}
    {%- set key = 'cdc_lake.typed_columns.' ~ database_name ~ '.' ~ table_name -%}
    {%- set entry = {'inputs': local_md5(inputs | join('\n')), 'columns': columns} if inputs is not none else none -%}
    {%- if entry is none or fromjson(build_cache_get(key) or '{}') == entry -%}
        {{ return('') }}
    {%- endif -%}
    {{ return(cache_note(key, entry)) }}
{% endmacro %}
