{% macro create_raw_tables() %}
    {%- if execute -%}
        {%- do run_query("create database if not exists " ~ raw_schema()) -%}
        {#- Every dbt build, run and test runs this hook: one catalog read finds the tables already
            there, where a `create table if not exists` per table cost about 0.1 s each. -#}
        {%- set existing = run_query("show tables in " ~ raw_schema()).columns['tableName'].values() | map('lower') | list -%}
        {%- for fmt in cdc_formats() if ('raw_' ~ fmt) not in existing -%}
            {%- do run_query(
                "create table if not exists " ~ raw_schema() ~ ".raw_" ~ fmt ~ " ("
                ~ "kafka_topic string not null, kafka_partition int not null, "
                ~ "kafka_offset bigint not null, kafka_timestamp timestamp, kafka_key string, "
                ~ "kafka_value string, landed_at timestamp not null, landing_seq bigint not null, "
                ~ "kafka_headers array<struct<key: string, value: string>>, kafka_topic_incarnation int"
                ~ ") using iceberg tblproperties ('format-version' = '2', "
                ~ "'write.parquet.compression-codec' = 'snappy', 'write.wap.enabled' = 'true', "
                ~ "'write.parquet.row-group-size-bytes' = '4194304', 'read.split.target-size' = '4194304')"
            ) -%}
        {%- endfor -%}
        {%- for fmt in cdc_formats() if ('raw_' ~ fmt) in existing -%}
            {#- a raw table landed before the column existed gets it (null = incarnation 0) -#}
            {%- set columns = run_query("describe table " ~ raw_schema() ~ ".raw_" ~ fmt).columns[0].values() -%}
            {%- if 'kafka_topic_incarnation' not in columns -%}
                {%- do run_query("alter table " ~ raw_schema() ~ ".raw_" ~ fmt
                                 ~ " add column kafka_topic_incarnation int") -%}
            {%- endif -%}
        {%- endfor -%}
        {%- if 'kafka_end_offsets' not in existing -%}
            {%- do run_query(
                "create table if not exists " ~ raw_schema() ~ ".kafka_end_offsets ("
                ~ "kafka_topic string not null, kafka_partition int not null, latest_offset bigint not null, "
                ~ "observed_at timestamp not null) using iceberg"
            ) -%}
        {%- endif -%}
        {%- if 'cdc_set_aside_records' not in existing -%}
            {%- do run_query(
                "create table if not exists " ~ raw_schema() ~ ".cdc_set_aside_records ("
                ~ "source_format string not null, kafka_topic string not null, kafka_partition int not null, "
                ~ "kafka_offset bigint not null, kafka_topic_incarnation int, landing_seq bigint not null, "
                ~ "kafka_timestamp timestamp, landed_at timestamp not null, kafka_value string, "
                ~ "reason string not null, set_aside_at timestamp not null) using iceberg"
            ) -%}
        {%- endif -%}
        {#- the schema changes `cdc-lake accept-schema` accepted (cdc_lake.schema_acceptance
            creates the same table; test_project_rules checks that the two agree) -#}
        {%- if 'cdc_schema_acceptances' not in existing -%}
            {%- do run_query(
                "create table if not exists " ~ raw_schema() ~ ".cdc_schema_acceptances ("
                ~ "database_name string not null, table_name string not null, "
                ~ "accepted_columns array<string> not null, accepted_schema_changes array<string> not null, "
                ~ "released_records bigint not null, accepted_at timestamp not null) using iceberg"
            ) -%}
        {%- endif -%}
        {%- if 'verification_results' not in existing -%}
            {%- do run_query(
                "create table if not exists " ~ raw_schema() ~ ".verification_results ("
                ~ "verification_id string not null, verified_at timestamp not null, source string not null, "
                ~ "source_system string, database_name string not null, table_name string not null, "
                ~ "status string not null, source_rows bigint, lake_rows bigint, differing_keys bigint, "
                ~ "differences string, source_position string, lake_position string, changes_in_flight bigint, "
                ~ "seconds double) using iceberg"
            ) -%}
        {%- endif -%}
    {%- endif -%}
{% endmacro %}
