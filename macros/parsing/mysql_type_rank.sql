{% macro mysql_type_rank(mysql_type) %}
    {#- How much a column type, as a format carries it, says: 2 for a MySQL type with what it needs
        (`decimal(12,2)`, `datetime(6)`, `varchar(64)`, `date`), 1 for a decimal without its
        precision and scale (`decimal`, Debezium's `decimal(?,2)`), 0 for a Kafka Connect fallback
        (`int8` .. `int64`, `float32`, `float64`, `string`, `bytes`, `boolean`) and for null.
        cdc_source_columns keeps the highest-ranked type of a column, the latest among equals. -#}
    case
        when {{ mysql_type }} is null then 0
        when lower(trim({{ mysql_type }})) in (
            'int8', 'int16', 'int32', 'int64', 'float32', 'float64', 'string', 'bytes', 'boolean'
        )
            then 0
        when lower(trim({{ mysql_type }})) rlike '^(decimal|numeric|dec|fixed)( *$| *[(] *[?])' then 1
        else 2
    end
{%- endmacro %}
