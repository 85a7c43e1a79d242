{% macro cdc_hash_secret_join() %}
    {%- set note = protected_columns_note() -%}
    {%- if not cdc_table_options().protects_columns -%}
        {{ return(note) }}
    {%- endif -%}
    {%- set variable = 'CDC_LAKE_HASH_SECRET' -%}
    {%- set missing = variable ~ ' is not set: the environment of the Spark driver and executors must hold the'
        ~ ' secret of hash_columns and exclude_columns (var cdc_table_options, docs/table_options.md)' -%}
    {%- if var('cdc_hash_secret_for_tests', none) is not none -%}
        {#- tests only: the secret written into the SQL -#}
        {%- set secret = sql_string_literal(var('cdc_hash_secret_for_tests')) -%}
    {%- else -%}
        {#- read when the query runs, never rendered into the SQL (dbt's files, view texts) -#}
        {%- set secret = "reflect('java.lang.System', 'getenv', '" ~ variable ~ "')" -%}
    {%- endif -%}
    {{- note }}
    cross join (
        select
            {{ _hmac_padded_key('cdc_hash_key', 54) }} as cdc_hash_ipad,
            {{ _hmac_padded_key('cdc_hash_key', 92) }} as cdc_hash_opad
        from (
            -- the key as 128 hex digits: the secret's UTF-8 bytes (their SHA-256 when longer than
            -- 64 bytes), zero-padded to SHA-256's block of 64 bytes
            select
                rpad(hex(case
                    when octet_length(cdc_hash_secret) > 64 then unhex(sha2(encode(cdc_hash_secret, 'UTF-8'), 256))
                    else encode(cdc_hash_secret, 'UTF-8')
                end), 128, '0') as cdc_hash_key
            from (
                select coalesce(nullif({{ secret }}, ''), raise_error({{ sql_string_literal(missing) }}))
                    as cdc_hash_secret
            ) as cdc_hash_read
        ) as cdc_hash_keyed
    ) as cdc_hash_secret
{%- endmacro %}

{% macro _hmac_padded_key(key_hex, pad) %}
    {#- each byte of the 64-byte key XOR the pad byte (0x36 inner, 0x5c outer), as binary -#}
    {{ return("unhex(concat_ws('', transform(sequence(0, 63), pii_i -> lpad(hex(cast(conv(substr(" ~ key_hex
              ~ ", 2 * pii_i + 1, 2), 16, 10) as int) ^ " ~ pad ~ "), 2, '0'))))") }}
{% endmacro %}
