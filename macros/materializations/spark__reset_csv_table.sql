{% macro spark__reset_csv_table(model, full_refresh, old_relation, agate_table) %}
    {#- dbt-spark drops and re-creates a seed's table on every `dbt seed` and `dbt build`: two
        metastore writes, a new Iceberg snapshot, and so every data test of every model that reads
        the seed runs again. Here a seed table that still holds what this CSV loaded last time
        (seed_is_loaded) is kept as it is, and spark__load_csv_rows then inserts nothing.
        `--full-refresh` always re-creates, and so does var `cdc_reuse_passes` false (reuse_passes).
        A kept seed is noted in the invocation's memo (kept_seeds) for spark__load_csv_rows and for
        the line report_shortcuts prints. -#}
    {%- if not full_refresh and reuse_passes() and seed_is_loaded(model, old_relation) -%}
        {%- do kept_seeds().update({model.unique_id: true}) -%}
        {{ return('') }}
    {%- endif -%}
    {%- if old_relation -%}
        {%- do adapter.drop_relation(old_relation) -%}
    {%- endif -%}
    {{ return(create_csv_table(model, agate_table)) }}
{% endmacro %}


{% macro seed_version(model) %}
    {#- What a seed's table is loaded from: the CSV file's checksum and the seed's column configs. -#}
    {{ return(local_md5(model.checksum.checksum ~ tojson(model.config.get('column_types') or {})
                        ~ model.config.get('quote_columns') ~ model.config.get('file_format'))) }}
{% endmacro %}


{% macro seed_is_loaded(model, relation) %}
    {#- True when the seed's table was loaded from this very CSV and config (seed_version, recorded by
        record_seed_load) and has not been written since (its current snapshot is the one the load
        committed). -#}
    {%- if relation is none or not relation.is_table -%}
        {{ return(false) }}
    {%- endif -%}
    {%- set recorded = relation_property(relation, 'cdc_lake.seed_load') -%}
    {%- if recorded is none -%}
        {{ return(false) }}
    {%- endif -%}
    {{ return(recorded == seed_version(model) ~ '@' ~ relation_property(relation, 'current-snapshot-id')) }}
{% endmacro %}


{% macro record_seed_load(relation, model) %}
    {#- After a seed's rows are inserted: records the seed_version and the snapshot the load
        committed, as one table property (a property change commits no snapshot). -#}
    {%- set loaded = seed_version(model) ~ '@' ~ relation_property(relation, 'current-snapshot-id') -%}
    {%- do run_query("alter table " ~ relation ~ " set tblproperties ('cdc_lake.seed_load' = "
                     ~ sql_string_literal(loaded) ~ ")") -%}
{% endmacro %}
