{% macro parse_mysql_type(mysql_type) %}
    {#- A MySQL column type as the formats write it (`int(11)`, `bigint(20) unsigned`,
        `decimal(10,2)`, `DATETIME(6)`, `enum('a','b')`) taken apart, as
        struct<base, args, is_unsigned, precision, scale, lookup_keys>:
        `base` the lowercase type name, `args` the text between the parentheses (spaces removed),
        `precision`/`scale` its first two numbers (null when absent or not numbers, as in Debezium's
        `decimal(?,2)`), and `lookup_keys` the keys to look the type up under in the
        mysql_spark_types seed, most specific first: `tinyint(1) unsigned`, `tinyint unsigned`,
        `tinyint(1)`, `tinyint`. A null type gives null. `mysql_type` is repeated: pass a column. -#}
    {%- set t = "lower(trim(" ~ mysql_type ~ "))" -%}
    {%- set base = "regexp_extract(" ~ t ~ ", '^([a-z0-9_]+)', 1)" -%}
    {%- set args = "regexp_replace(regexp_extract(" ~ t ~ ", '^[a-z0-9_]+ *[(]([^)]*)[)]', 1), ' ', '')" -%}
    {%- set is_unsigned = "(" ~ t ~ " rlike ' unsigned( |$)')" -%}
    case when {{ mysql_type }} is not null then named_struct(
        'base', {{ base }},
        'args', {{ args }},
        'is_unsigned', {{ is_unsigned }},
        'precision', try_cast(split({{ args }}, ',')[0] as int),
        'scale', try_cast(try_element_at(split({{ args }}, ','), 2) as int),
        'lookup_keys', filter(array(
            case when {{ args }} != '' and {{ is_unsigned }} then concat({{ base }}, '(', {{ args }}, ') unsigned') end,
            case when {{ is_unsigned }} then concat({{ base }}, ' unsigned') end,
            case when {{ args }} != '' then concat({{ base }}, '(', {{ args }}, ')') end,
            {{ base }}
        ), k -> k is not null)
    ) end
{%- endmacro %}
