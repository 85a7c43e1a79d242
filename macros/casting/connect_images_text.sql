{% macro connect_images_text(before, after, before_text, after_text, raw_json, column_decoders, field_schemas, hbase=none) %}
    {%- set decoder = column_decoders ~ "[ci_col]" if hbase is none
        else "if(" ~ hbase ~ ", 'hbase_cell', " ~ column_decoders ~ "[ci_col])" -%}
    {%- set entry = "to_json(map(ci_col, ci_val))" -%}
    {%- set sent_as_number = "(instr(ci_side.text, substr(" ~ entry ~ ", 2, length(" ~ entry ~ ") - 2)) = 0)" -%}
    {%- set number_pattern = "concat('\"\\\\Q', replace(ci_col, '\\\\E', '\\\\E\\\\\\\\E\\\\Q'), "
        ~ "'\\\\E\"\\\\s*:\\\\s*(-?[0-9]+(?:\\\\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)')" -%}
    {%- set number_text = "if(ci_val rlike '^-?[0-9]+$', ci_val, coalesce(element_at(filter("
        ~ "regexp_extract_all(" ~ raw_json ~ ", " ~ number_pattern ~ ", 1), "
        ~ "ci_number -> cast(ci_number as double) = cast(ci_val as double)), 1), ci_val))" -%}
    transform(
        array(
            named_struct('image', {{ before }}, 'text', {{ before_text }}),
            named_struct('image', {{ after }}, 'text', {{ after_text }})
        ),
        ci_side -> transform_values(
            ci_side.image,
            (ci_col, ci_val) -> {{ connect_value_text(
                'ci_val',
                decoder,
                field_schemas ~ '[ci_col].parameters',
                sent_as_number,
                number_text,
                items=connect_array_items(raw_json, field_schemas ~ '[ci_col]')
            ) | indent(12) }}
        )
    )
{%- endmacro %}
