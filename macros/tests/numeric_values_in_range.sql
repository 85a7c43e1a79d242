{% test numeric_values_in_range(model, image_column='image', types_column='column_types') %}
    with sent_values as (

        select
            checked.*,
            entry.key as column_name,
            entry.value as value_text,
            lower(trim(checked.{{ types_column }}[entry.key])) as mysql_type
        from {{ model }} as checked
            lateral view explode({{ image_column }}) entry as key, value

    ),

    type_names as (

        -- a batch holds few distinct types: each is parsed once here, not once per value
        select distinct mysql_type
        from sent_values
        where mysql_type is not null

    ),

    parsed_types as (

        select
            mysql_type,
            regexp_extract(mysql_type, '^([a-z]+[0-9]*)', 1) as base_type,
            mysql_type like '%unsigned%' as is_unsigned,
            try_cast(regexp_extract(mysql_type, '\\(\\s*([0-9]+)', 1) as int) as type_precision,
            try_cast(regexp_extract(mysql_type, '\\(\\s*[0-9]+\\s*,\\s*([0-9]+)\\s*\\)', 1) as int) as type_scale
        from type_names

    ),

    numeric_types as (

        select
            *,
            case base_type
                when 'tinyint' then if(is_unsigned, 255, 127)
                when 'int8' then 127
                when 'smallint' then if(is_unsigned, 65535, 32767)
                when 'int16' then 32767
                when 'mediumint' then if(is_unsigned, 16777215, 8388607)
                when 'int' then if(is_unsigned, 4294967295, 2147483647)
                when 'integer' then if(is_unsigned, 4294967295, 2147483647)
                when 'int32' then 2147483647
                when 'bigint' then if(is_unsigned, 18446744073709551615, 9223372036854775807)
                when 'int64' then 9223372036854775807
                when 'year' then 2155
                when 'bit' then pow(2, coalesce(type_precision, 1)) - 1
            end as max_value,
            case base_type
                when 'tinyint' then if(is_unsigned, 0, -128)
                when 'int8' then -128
                when 'smallint' then if(is_unsigned, 0, -32768)
                when 'int16' then -32768
                when 'mediumint' then if(is_unsigned, 0, -8388608)
                when 'int' then if(is_unsigned, 0, -2147483648)
                when 'integer' then if(is_unsigned, 0, -2147483648)
                when 'int32' then -2147483648
                when 'bigint' then if(is_unsigned, 0, -9223372036854775808)
                when 'int64' then -9223372036854775808
                when 'year' then 0
                when 'bit' then 0
            end as min_value
        from parsed_types
        where base_type in (
            'tinyint', 'int8', 'smallint', 'int16', 'mediumint', 'int', 'integer', 'int32', 'bigint', 'int64',
            'year', 'bit', 'decimal', 'numeric', 'dec', 'fixed'
        )

    ),

    bounds as (

        -- only the values of numeric columns go on
        select /*+ broadcast(numeric_types) */
            sent_values.*,
            numeric_types.base_type,
            numeric_types.is_unsigned,
            numeric_types.type_precision,
            numeric_types.type_scale,
            numeric_types.max_value,
            numeric_types.min_value,
            try_cast(sent_values.value_text as decimal(38, 0)) as integer_value
        from sent_values
        inner join numeric_types
            on sent_values.mysql_type = numeric_types.mysql_type
        where sent_values.value_text is not null

    ),

    bad as (

        select
            *,
            case
                when max_value is not null and not value_text rlike '^-?(0|[1-9][0-9]*)$'
                    then 'not an integer in canonical text'
                when max_value is not null and (integer_value is null or integer_value > max_value)
                    then concat('above the largest ', mysql_type)
                when max_value is not null and integer_value < min_value
                    then concat('below the smallest ', mysql_type)
                when base_type in ('decimal', 'numeric', 'dec', 'fixed') and not value_text rlike '^-?(0|[1-9][0-9]*)(\\.[0-9]+)?$'
                    then 'not a decimal in canonical text'
                when base_type in ('decimal', 'numeric', 'dec', 'fixed') and is_unsigned and value_text like '-%'
                    then 'negative value of an unsigned decimal'
                when base_type in ('decimal', 'numeric', 'dec', 'fixed') and type_precision is not null
                    and length(regexp_extract(value_text, '^-?([0-9]+)', 1)) > type_precision - coalesce(type_scale, 0)
                    and regexp_extract(value_text, '^-?([0-9]+)', 1) != '0'
                    then concat('more integer digits than ', mysql_type, ' holds')
                when base_type in ('decimal', 'numeric', 'dec', 'fixed') and type_scale is not null
                    and length(regexp_extract(value_text, '\\.([0-9]+)$', 1)) != type_scale
                    then concat('not exactly ', type_scale, ' fraction digits')
            end as problem
        from bounds

    )

    select *
    from bad
    where problem is not null
{% endtest %}
