{% macro cast_canonical_text(value, spark_type) %}
    {#- A Spark SQL expression turning the canonical text of a MySQL value (docs/canonical_values.md)
        into `spark_type`: `unhex` for binary (canonical binary is lowercase hex), `try_cast`
        otherwise, so a value that does not fit gives null instead of failing the query (the
        `typed_values_preserved` test reports such values). `spark_type` must be a plain Spark type
        name with optional arguments (`decimal(10,2)`, `timestamp`, `string`). -#}
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
