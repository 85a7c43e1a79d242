-- Heartbeats of every format that sends them with a source time (Tencent DTS today), in one
-- shape: the base of the heartbeat figures of cdc_lag.

with unioned as (

    {% for fmt in cdc_formats(carrying='heartbeats') %}
        select
            {{ canonical_columns('staged_heartbeats', relation='heartbeats') | indent(12) }}
        from {{ ref('stg_' ~ fmt ~ '__heartbeats') }} as heartbeats
        {% if not loop.last %}union all{% endif %}
    {% endfor %}

),

final as (

    select * from unioned

)

select * from final
