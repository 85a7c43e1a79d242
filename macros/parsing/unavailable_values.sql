{% macro unavailable_value_forms() %}
    {#- array<string> of every text a Debezium connector writes, in a row image's map<string,string>
        as read by from_json, for a value it marks unavailable (PostgreSQL: an unchanged TOASTed
        column it was not sent; Oracle: an unread LOB). The marker is the connector's
        `unavailable.value.placeholder` (var `cdc_unavailable_value_placeholder`, default
        `__debezium_unavailable_value`; a `hex:` prefix gives the bytes in hexadecimal, as the
        connector reads it), written in the column type's own encoding: the text (text, json,
        jsonb, xml and other string types), its bytes in base64 (bytea), a one-element array of
        either (text[], bytea[]), the bytes as signed integers (int[] and bigint[]), a map of the
        text to itself (hstore, as a JSON object or as a JSON string holding one), and a
        one-element array of the name-based (version 3) UUID of the bytes (uuid[]). Spark folds
        the expression to a constant. -#}
    {%- set placeholder = var('cdc_unavailable_value_placeholder', '__debezium_unavailable_value') -%}
    {%- if placeholder.startswith('hex:') -%}
        {%- set bytes = "unhex(" ~ sql_string_literal(placeholder[4:]) ~ ")" -%}
    {%- else -%}
        {%- set bytes = "encode(" ~ sql_string_literal(placeholder) ~ ", 'UTF-8')" -%}
    {%- endif -%}
    {%- set text = "decode(" ~ bytes ~ ", 'UTF-8')" -%}
    {%- set md5_hex = "md5(" ~ bytes ~ ")" -%}
    {%- set uuid = "concat_ws('-', substr(" ~ md5_hex ~ ", 1, 8), substr(" ~ md5_hex ~ ", 9, 4), "
        ~ "concat('3', substr(" ~ md5_hex ~ ", 14, 3)), "
        ~ "concat(lower(hex((cast(conv(substr(" ~ md5_hex ~ ", 17, 1), 16, 10) as int) & 3) | 8)), "
        ~ "substr(" ~ md5_hex ~ ", 18, 3)), substr(" ~ md5_hex ~ ", 21, 12))" -%}
    {%- set signed_bytes = "transform(sequence(1, length(" ~ bytes ~ ")), uv_i -> "
        ~ "cast(conv(hex(substr(" ~ bytes ~ ", uv_i, 1)), 16, 10) as int) "
        ~ "- if(cast(conv(hex(substr(" ~ bytes ~ ", uv_i, 1)), 16, 10) as int) > 127, 256, 0))" -%}
    array(
        {{ text }},
        base64({{ bytes }}),
        to_json(array({{ text }})),
        to_json(array(base64({{ bytes }}))),
        to_json({{ signed_bytes }}),
        to_json(map({{ text }}, {{ text }})),
        to_json(array({{ uuid }}))
    )
{%- endmacro %}


{% macro unavailable_columns(sent_image, forms) %}
    {#- Sorted names of the columns of `sent_image` (a row image as sent, map<string,string>) whose
        value is the connector's unavailable-value marker in one of its forms (`forms`, SQL of an
        array<string>: unavailable_value_forms()); empty when none, null when the image is null. -#}
    array_sort(map_keys(map_filter({{ sent_image }}, (uv_k, uv_v) -> array_contains({{ forms }}, uv_v))))
{%- endmacro %}


{% macro without_columns(image, columns) %}
    {#- `image` (map<string,string>) with the values of `columns` (array<string>) set to null:
        a value the message does not carry is not decoded, and is never taken as the value. -#}
    transform_values({{ image }}, (wc_k, wc_v) -> if(array_contains({{ columns }}, wc_k), null, wc_v))
{%- endmacro %}


{% macro key_only_image(image, key_columns) %}
    {#- True when every non-key column of `image` (a row image as sent) holds nothing of the row:
        null, or the zero of its type that Debezium writes into a NOT NULL column it was not sent
        (0, false, an empty string, base64 of zero bytes, an empty array or object). That is the
        before image of a PostgreSQL delete under REPLICA IDENTITY DEFAULT: only the key was
        logged. A FULL image whose other values all happen to be such zeros reads as key-only too;
        cdc_history then takes them from the key's previous version, which holds the same values. -#}
    ({{ image }} is not null and size({{ key_columns }}) > 0 and forall(
        map_entries({{ image }}),
        ko_e -> array_contains({{ key_columns }}, ko_e.key)
        or ko_e.value is null
        or ko_e.value in ('', 'false', '[]', '{}')
        or ko_e.value rlike '^-?0+(\\.0+)?([eE][-+]?[0-9]+)?$'
        or ko_e.value rlike '^(AAAA)*(AA==|AAA=)?$'
    ))
{%- endmacro %}
