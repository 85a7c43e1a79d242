{% macro ddl_table_name(statement) %}
    nullif(regexp_replace(regexp_extract(
        {{ statement }},
        '(?is)^(?:\\s++|/\\*.*?\\*/)*+(?:(?:CREATE|ALTER|DROP|TRUNCATE|RENAME)\\s+(?:TEMPORARY\\s+|ONLINE\\s+|IGNORE\\s+)?TABLE\\s+(?:IF\\s+(?:NOT\\s+)?EXISTS\\s+)?|(?:CREATE|DROP)\\s+(?:UNIQUE\\s+|FULLTEXT\\s+|SPATIAL\\s+)?INDEX\\s+\\S+\\s+ON\\s+)(?:(?:`[^`]+`|[\\w$]+)\\s*\\.\\s*)?(`[^`]+`|[\\w$]+)',
        1
    ), '`', ''), '')
{% endmacro %}
