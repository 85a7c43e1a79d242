{% macro _hmac_sha256(value) %}
    {#- HMAC-SHA-256 (RFC 2104) of the value's UTF-8 bytes, lower-case hex: the inner and outer
        padded keys are the columns that cdc_hash_secret_join adds -#}
    {{ return("sha2(concat(cdc_hash_opad, unhex(sha2(concat(cdc_hash_ipad, encode(" ~ value
              ~ ", 'UTF-8')), 256))), 256)") }}
{% endmacro %}
