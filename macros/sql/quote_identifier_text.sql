{% macro quote_identifier_text(expression) %}
    {#- A SQL expression: the text of `expression` (a name read from data at run time) as a
        back-quoted MySQL/Spark identifier, embedded backticks doubled; null stays null. For SQL
        text the project writes, never runs (e.g. a TRUNCATE statement reconstructed from a record). -#}
    concat('`', replace({{ expression }}, '`', '``'), '`')
{%- endmacro %}
