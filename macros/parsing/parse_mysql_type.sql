{% macro parse_mysql_type(mysql_type) %}
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
