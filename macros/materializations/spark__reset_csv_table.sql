{% macro spark__reset_csv_table(model, full_refresh, old_relation, agate_table) %}
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
    {{ return(local_md5(model.checksum.checksum ~ tojson(model.config.get('column_types') or {})
                        ~ model.config.get('quote_columns') ~ model.config.get('file_format'))) }}
{% endmacro %}

{% macro seed_is_loaded(model, relation) %}
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
    {%- set loaded = seed_version(model) ~ '@' ~ relation_property(relation, 'current-snapshot-id') -%}
    {%- do run_query("alter table " ~ relation ~ " set tblproperties ('cdc_lake.seed_load' = "
                     ~ sql_string_literal(loaded) ~ ")") -%}
{% endmacro %}
