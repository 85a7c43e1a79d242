{% macro canonical_mysql_value(value, mysql_type, binary_encoding='latin1', time_zone=none) %}
    {%- if binary_encoding not in ['latin1', 'hex'] -%}
        {{ exceptions.raise_compiler_error(
            "canonical_mysql_value: binary_encoding must be 'latin1' or 'hex', got '" ~ binary_encoding ~ "'") }}
    {%- endif -%}
    {%- set time_zone = time_zone or topic_time_zone(none) -%}
    {#- the bytes of a binary value as lowercase hex (kept as sent when they are no hex) #}
    {%- set hex -%}
        {%- if binary_encoding == 'latin1' -%} lower(hex(encode(_m.v, 'ISO-8859-1')))
        {%- else -%} case
            when _m.v rlike '^(0[xX])?[0-9a-fA-F]*$' then lpad(
                lower(regexp_replace(_m.v, '^0[xX]', '')),
                length(regexp_replace(_m.v, '^0[xX]', '')) + length(regexp_replace(_m.v, '^0[xX]', '')) % 2,
                '0'
            )
            else _m.v
        end
        {%- endif -%}
    {%- endset %}
    element_at(transform(
        array(named_struct(
            'v', {{ value }},
            't', coalesce({{ mysql_type }}, ''),
            'base', lower(regexp_extract(coalesce({{ mysql_type }}, ''), '^\\s*([a-zA-Z]+)', 1))
        )),
        _m -> case
            when _m.v is null then null
            when _m.base in ('tinyint', 'smallint', 'mediumint', 'int', 'integer', 'bigint', 'year',
                             'bool', 'boolean', 'serial') then case
                when lower(_m.v) = 'true' then '1'
                when lower(_m.v) = 'false' then '0'
                else regexp_replace(_m.v, '^(-?)0+(?=[0-9])', '$1')
            end
            when _m.base in ('decimal', 'numeric', 'dec', 'fixed') then element_at(transform(
                array(coalesce(
                    try_cast(regexp_extract(_m.t, '\\(\\s*[0-9]+\\s*,\\s*([0-9]+)\\s*\\)', 1) as int),
                    case when _m.t rlike '\\(\\s*[0-9]+\\s*\\)' then 0 end
                )),
                _scale -> case
                    when _scale is null or not _m.v rlike '^-?[0-9]*(\\.[0-9]*)?$' or not _m.v rlike '[0-9]'
                        then _m.v
                    else concat(
                        regexp_extract(_m.v, '^(-?)', 1),
                        coalesce(nullif(regexp_extract(_m.v, '^-?0*([0-9]*)', 1), ''), '0'),
                        case
                            when _scale > 0
                                then concat('.', rpad(regexp_extract(_m.v, '\\.([0-9]*)$', 1), _scale, '0'))
                            else ''
                        end
                    )
                end
            ), 1)
            when _m.base = 'float' then coalesce(cast(try_cast(_m.v as float) as string), _m.v)
            when _m.base in ('double', 'real') then coalesce(cast(try_cast(_m.v as double) as string), _m.v)
            when _m.base in ('datetime', 'time') then {{ _trim_time_fraction('_m.v') }}
            when _m.base = 'timestamp' then
            {%- if time_zone | trim == sql_string_literal('UTC') %} {{ _trim_time_fraction('_m.v') }}
            {%- else %} coalesce(
                {{ _trim_time_fraction(
                    "date_format(to_utc_timestamp(try_cast(_m.v as timestamp), " ~ time_zone ~ "), "
                    ~ "'yyyy-MM-dd HH:mm:ss.SSSSSS')") }},
                {{ _trim_time_fraction('_m.v') }}
            )
            {%- endif %}
            {#- BINARY(n) holds exactly n bytes, padded with 0x00; a row-based binlog drops the
                trailing 0x00 bytes (Canal sends x'00ff1000' of a binary(4) as 3 bytes) #}
            when _m.base = 'binary' then element_at(transform(
                array(named_struct(
                    'h', {{ hex }},
                    'n', coalesce(try_cast(regexp_extract(_m.t, '\\(\\s*([0-9]+)\\s*\\)', 1) as int), 0)
                )),
                _b -> if(_b.h rlike '^[0-9a-f]*$' and length(_b.h) < 2 * _b.n, rpad(_b.h, 2 * _b.n, '0'), _b.h)
            ), 1)
            {#- geometry: MySQL's internal value (4-byte little-endian SRID, then WKB), as bytes #}
            when _m.base in (
                'varbinary', 'tinyblob', 'blob', 'mediumblob', 'longblob', 'geometry', 'point',
                'linestring', 'polygon', 'multipoint', 'multilinestring', 'multipolygon', 'geometrycollection',
                'geomcollection'
            ) then {{ hex }}
            when _m.base = 'bit' then case
                when _m.v rlike '^[0-9]+$' then regexp_replace(_m.v, '^0+(?=[0-9])', '')
                when _m.v rlike '^0[xX][0-9a-fA-F]+$' then conv(substr(_m.v, 3), 16, 10)
                when _m.v rlike '^[bB]\\x27[01]+\\x27$' then conv(regexp_extract(_m.v, '([01]+)', 1), 2, 10)
                else _m.v
            end
            when _m.base in ('enum', 'set') then element_at(transform(
                {#- the labels of the definition, in order: enum('a','it''s') -> [a, it's] #}
                array(transform(
                    regexp_extract_all(_m.t, '\\x27((?:[^\\x27]++|\\x27\\x27)*+)\\x27?', 1),
                    _label -> replace(_label, repeat(char(39), 2), char(39))
                )),
                _labels -> case
                    when size(_labels) = 0 or not _m.v rlike '^[0-9]+$' then _m.v
                    {#- an enum is sent as its 1-based index (0 = the invalid-value empty string) #}
                    when _m.base = 'enum' and array_contains(_labels, _m.v) then _m.v
                    when _m.base = 'enum' and try_cast(_m.v as int) = 0 then ''
                    when _m.base = 'enum' then coalesce(get(_labels, try_cast(_m.v as int) - 1), _m.v)
                    {#- a set is sent as its bitmask: bit i set = label i present #}
                    else array_join(
                        filter(_labels, (_label, _i) -> substr(reverse(conv(_m.v, 10, 2)), _i + 1, 1) = '1'),
                        ','
                    )
                end
            ), 1)
            else _m.v
        end
    ), 1)
{% endmacro %}
