{% macro connect_images_text(before, after, column_decoders, field_schemas, hbase=none) %}
    {#- array(before, after) of a Kafka Connect record with every value decoded to canonical text
        by `connect_value_text` (one copy of the decoder for both images). `hbase`: optional SQL
        boolean; when true every cell is an HBase cell (`hbase_cell` decoder). -#}
    {%- set decoder = column_decoders ~ "[ci_col]" if hbase is none
        else "if(" ~ hbase ~ ", 'hbase_cell', " ~ column_decoders ~ "[ci_col])" -%}
    transform(
        array({{ before }}, {{ after }}),
        ci_image -> transform_values(
            ci_image,
            (ci_col, ci_val) -> {{ connect_value_text(
                'ci_val',
                decoder,
                field_schemas ~ '[ci_col].parameters'
            ) }}
        )
    )
{%- endmacro %}
