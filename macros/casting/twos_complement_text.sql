{% macro twos_complement_text(hex_value, short=false) %}
    {%- set h = "tc_hex" -%}
    {%- set negative = "substr(" ~ h ~ ", 1, 1) >= '8'" -%}
    {%- set magnitude = "if(" ~ negative ~ ", translate(" ~ h ~ ", '0123456789ABCDEF', 'FEDCBA9876543210'), " ~ h ~ ")" -%}
    {#- chunk i (from the left) of 7 hex digits; the first chunk takes the remainder -#}
    {%- set head = "(length(" ~ h ~ ") - (ceil(length(" ~ h ~ ") / 7.0) - 1) * 7)" -%}
    {%- set count = "cast(ceil(length(" ~ h ~ ") / 7.0) as int)" -%}
    {%- set chunk = "cast(conv(if(tc_i = 0, substr(" ~ magnitude ~ ", 1, " ~ head ~ "), "
        ~ "substr(" ~ magnitude ~ ", " ~ head ~ " + (tc_i - 1) * 7 + 1, 7)), 16, 10) as bigint) "
        ~ "+ if(" ~ negative ~ " and tc_i = " ~ count ~ " - 1, 1, 0)" -%}
    {%- if short %}
    {#- up to 16 hex digits: the sign extended to 64 bits, read as a signed number -#}
    case
        when {{ hex_value }} is null then null
        when {{ hex_value }} = '' then '0'
        when length({{ hex_value }}) <= 16 then conv(
            lpad({{ hex_value }}, 16, case when {{ hex_value }} >= '8' then 'F' else '0' end), 16, -10
        )
    end
    {%- else %}
    element_at(transform(array({{ hex_value }}), tc_hex -> case
        when {{ h }} is null then null
        when {{ h }} = '' then '0'
        when length({{ h }}) <= 16 then conv(lpad({{ h }}, 16, if({{ negative }}, 'F', '0')), 16, -10)
        {#- every lambda in a body, none in another's argument: Spark's analyzer resolves those in
            fewer passes -#}
        else aggregate(
            sequence(0, {{ count }} - 1),
            cast(array() as array<bigint>),
            (tc_limbs, tc_i) -> {{ _limbs_times_2_28_plus('tc_limbs', chunk) }},
            tc_limbs -> concat(
                if({{ negative }}, '-', ''),
                regexp_replace(array_join(transform(
                    reverse(tc_limbs),
                    (tc_limb, tc_j) -> if(tc_j = 0, cast(tc_limb as string), lpad(cast(tc_limb as string), 9, '0'))
                ), ''), '^0+(?=[0-9])', '')
            )
        )
    end), 1)
    {%- endif %}
{%- endmacro %}

{% macro _limbs_times_2_28_plus(limbs, addend) %}
    aggregate({{ limbs }},
        named_struct('out', cast(array() as array<bigint>), 'carry', cast({{ addend }} as bigint)),
        (ma_s, ma_limb) -> named_struct(
            'out', concat(ma_s.out, array((ma_limb * 268435456 + ma_s.carry) % 1000000000)),
            'carry', (ma_limb * 268435456 + ma_s.carry) div 1000000000),
        ma_s -> if(ma_s.carry > 0 or size(ma_s.out) = 0, concat(ma_s.out, array(ma_s.carry)), ma_s.out))
{%- endmacro %}
