{% macro json_read_options(extra={}) %}
    {#- The options map of every from_json that reads a Kafka record or a value of it. Spark 3.5
        reads JSON with Jackson, whose StreamReadConstraints refuse one JSON string longer than
        20,000,000 characters unless from_json's `maxStringLen` raises the cap (a record holding
        one, such as a Tencent DTS longblob of more than ~9.5 MB as 0x + hex, then read as
        malformed). The cap is lifted to Java's largest string: a string cannot be longer than the
        record that holds it, whose size the Kafka topic bounds. `extra`: more options. -#}
    map({%- for name, value in extra.items() %}'{{ name }}', '{{ value }}', {% endfor -%}'maxStringLen', '2147483647')
{%- endmacro %}
