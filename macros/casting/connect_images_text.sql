{% macro connect_images_text(before, after, before_text, after_text, raw_json, column_decoders, field_schemas, hbase=none) %}
    {#- array(before, after) of a Kafka Connect record with every value decoded to canonical text
        by `connect_value_text` (one copy of the decoder for both images). `hbase`: optional SQL
        boolean; when true every cell is an HBase cell (`hbase_cell` decoder).

        A map<string,string> read by from_json forgets each value's JSON type and reads a JSON
        number with a fraction as a double. So a Connect Decimal is decided, and its digits taken,
        from the record's own text:
        - `before_text`/`after_text`: the image object as the JSON parser re-wrote it (a field of
          type string in the envelope schema): compact, strings quoted, escaped as `to_json`
          escapes them. A value was a JSON string exactly when its entry `"col":"value"` is in it.
        - `raw_json`: the Kafka value. The digits of a number with a fraction are taken from it
          (the `"col": <number>` entries whose value equals, as a double, the parsed one): exact
          at any length. Integers are exact already.
        Only Decimal fields pay for this (the CASE in `connect_value_text` asks first).
        An array field's elements are decoded by its element schema, which `connect_array_items`
        reads from `raw_json`, for array values only. -#}
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
