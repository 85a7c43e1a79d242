{% macro cast_canonical_text(value, spark_type) %}
    {%- set type_text = spark_type | string | trim | lower -%}
    {%- if not modules.re.match("^[a-z_]+( *[(] *[0-9]+ *(, *[0-9]+ *)?[)])?$", type_text) -%}
        {{ exceptions.raise_compiler_error(
            "cast_canonical_text: '" ~ spark_type ~ "' is not a Spark type such as int, decimal(10,2) or timestamp") }}
    {%- endif -%}
    {%- if type_text == 'string' -%}
        {{ value }}
    {%- elif type_text == 'binary' -%}
        unhex({{ value }})
    {%- else -%}
        try_cast({{ value }} as {{ type_text }})
    {%- endif -%}
{%- endmacro %}
