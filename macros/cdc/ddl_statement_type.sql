{% macro ddl_statement_type(statement) %}
    {%- set text = "regexp_replace(" ~ statement ~ ", '^(?:\\\\s++|/\\\\*.*?\\\\*/)++', '')" -%}
    case
        when {{ statement }} is null then null
        when {{ text }} rlike '(?i)^CREATE\\s+((UNIQUE|FULLTEXT|SPATIAL)\\s+)?INDEX\\b' then 'CINDEX'
        when {{ text }} rlike '(?i)^DROP\\s+INDEX\\b' then 'DINDEX'
        when {{ text }} rlike '(?i)^CREATE\\s+(TEMPORARY\\s+)?TABLE\\b' then 'CREATE'
        when {{ text }} rlike '(?i)^ALTER\\s+(ONLINE\\s+|IGNORE\\s+)?TABLE\\b' then 'ALTER'
        when {{ text }} rlike '(?i)^DROP\\s+(TEMPORARY\\s+)?TABLE\\b' then 'ERASE'
        when {{ text }} rlike '(?i)^RENAME\\s+TABLE\\b' then 'RENAME'
        when {{ text }} rlike '(?i)^TRUNCATE\\b' then 'TRUNCATE'
        else 'QUERY'
    end
{%- endmacro %}
