{% macro mysql_json_text(json_text) %}
    {#- JSON text as MySQL prints it (the canonical text of a JSON column): one space after every
        `:` and `,` outside strings, no other blanks. Debezium's binlog JSON formatter writes
        compact JSON (`{"a":1,"b":[1,2]}` -> `{"a": 1, "b": [1, 2]}`). The text is split into
        string literals (kept as they are, escapes included) and the parts between them (blanks
        removed, then the separators spaced). The string pattern is possessive: a backtracking one
        recursed once per character and overflowed the executor's stack on a 12.8 kB PostgreSQL
        jsonb value (StackOverflowError, which ended the driver JVM). -#}
    array_join(transform(
        regexp_extract_all({{ json_text }}, '"(?:[^"\\\\]++|\\\\.)*+"?|[^"]+', 0),
        js_part -> if(js_part like '"%', js_part, regexp_replace(regexp_replace(js_part, '\\s+', ''), '([:,])', '$1 '))
    ), '')
{%- endmacro %}
