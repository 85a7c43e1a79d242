{{ config(materialized='view') }}

with source_columns as (

    select *
    from {{ ref('cdc_source_columns') }}

),

exposed_tables as (

    select
        database_name,
        table_name,
        map_filter(
            transform_values(
                transform_keys(str_to_map(coalesce(column_types, ''), ';', ':'), (k, v) -> trim(k)),
                (k, v) -> lower(trim(v))
            ),
            (k, v) -> k != ''
        ) as type_overrides
    from {{ ref('cdc_tables') }}

),

type_map as (

    select *
    from {{ ref('mysql_spark_types') }}

),

parsed as (

    select
        *,
        {{ parse_mysql_type('mysql_type') }} as parsed_type
    from source_columns

),

matched as (

    select
        parsed.*,
        type_map.mysql_type as matched_key,
        type_map.spark_type as spark_type_template,
        type_map.max_precision,
        row_number() over (
            partition by parsed.database_name, parsed.table_name, parsed.column_name
            order by array_position(parsed.parsed_type.lookup_keys, type_map.mysql_type)
        ) as match_rank
    from parsed
    left join type_map
        on array_contains(parsed.parsed_type.lookup_keys, type_map.mysql_type)

),

mapped as (

    select
        *,
        case
            when spark_type_template is null then 'string'
            when spark_type_template not like '%{p}%' and spark_type_template not like '%{s}%'
                then spark_type_template
            -- precision and scale unknown, or the precision does not fit: keep the exact text
            when parsed_type.scale is null and parsed_type.precision is null then 'string'
            when parsed_type.precision > max_precision then 'string'
            when parsed_type.scale is null and parsed_type.args rlike '^[0-9]+$'
                then replace(replace(spark_type_template, '{p}', parsed_type.precision), '{s}', '0')
            when parsed_type.scale is null then 'string'
            else replace(
                replace(spark_type_template, '{p}', coalesce(parsed_type.precision, max_precision)),
                '{s}',
                parsed_type.scale
            )
        end as mapped_spark_type
    from matched
    where match_rank = 1

),

final as (

    select
        mapped.database_name,
        mapped.table_name,
        mapped.column_name,
        row_number() over (
            partition by mapped.database_name, mapped.table_name
            order by mapped.first_seen_ts, mapped.first_position, mapped.column_name
        ) as column_position,
        mapped.mysql_type,
        mapped.is_primary_key,
        coalesce(exposed_tables.type_overrides[mapped.column_name], mapped.mapped_spark_type) as spark_type,
        case
            when exposed_tables.type_overrides[mapped.column_name] is not null then 'cdc_tables'
            when mapped.matched_key is not null then 'mysql_spark_types'
            else 'default'
        end as type_source,
        mapped.matched_key as mysql_spark_types_key,
        exposed_tables.table_name is not null as is_exposed,
        mapped.first_seen_ts,
        mapped.last_seen_ts
    from mapped
    left join exposed_tables
        on
            mapped.database_name = exposed_tables.database_name
            and mapped.table_name = exposed_tables.table_name

)

select * from final
