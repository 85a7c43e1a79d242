-- Heartbeats of every format that sends them with a source time (Tencent DTS today), in one
-- shape: the base of the heartbeat figures of cdc_lag.

with unioned as (

    {{ union_staged('heartbeats') }}

),

final as (

    select * from unioned

)

select * from final
