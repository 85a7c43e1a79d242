{% macro ddl_table_name(statement) %}
    {#- Table a MySQL DDL statement acts on (CREATE/ALTER/DROP/TRUNCATE/RENAME TABLE, CREATE/DROP
        INDEX ... ON), without quotes or database prefix; null for other statements. For formats
        whose schema-change records do not name the table (dtle). -#}
    nullif(regexp_replace(regexp_extract(
        {{ statement }},
        '(?is)^(?:\\s++|/\\*.*?\\*/)*+(?:(?:CREATE|ALTER|DROP|TRUNCATE|RENAME)\\s+(?:TEMPORARY\\s+|ONLINE\\s+|IGNORE\\s+)?TABLE\\s+(?:IF\\s+(?:NOT\\s+)?EXISTS\\s+)?|(?:CREATE|DROP)\\s+(?:UNIQUE\\s+|FULLTEXT\\s+|SPATIAL\\s+)?INDEX\\s+\\S+\\s+ON\\s+)(?:(?:`[^`]+`|[\\w$]+)\\s*\\.\\s*)?(`[^`]+`|[\\w$]+)',
        1
    ), '`', ''), '')
{% endmacro %}
