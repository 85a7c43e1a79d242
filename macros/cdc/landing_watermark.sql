{% macro landing_watermark(column='landing_seq') %}
    {#- The highest landing sequence already in this incremental model, as a literal, so the
        filter `landing_seq > <literal>` lets Iceberg skip every data file landed before it.
        -1 on a first or full-refresh build (everything is new). -#}
    {%- if not execute or not is_incremental() -%}
        {{ return(-1) }}
    {%- endif -%}
    {%- set result = run_query("select max(" ~ column ~ ") from " ~ this) -%}
    {%- set value = result.columns[0].values()[0] -%}
    {{ return(-1 if value is none else value | int) }}
{% endmacro %}
