-- Every change carries the images its op implies: an insert or snapshot read has an after image
-- and no before image, an update has both, a delete has a before image and no after image. The
-- one exception: a PostgreSQL update (Debezium, source position `lsn ...`) under the table's
-- default REPLICA IDENTITY carries no before image.
-- A scheduled build checks the change log's last batch (`__cdc_batch__`, see tested_batch).

{{ config(where='__cdc_batch__') }}

select
    change_id,
    op,
    before is not null as has_before,
    after is not null as has_after
from {{ get_where_subquery(ref('cdc_changelog')) }}
where
    (op in ('c', 'r') and (before is not null or after is null))
    or (op = 'u' and (after is null or (before is null and not coalesce(source_position rlike '^lsn ', false))))
    or (op = 'd' and (before is null or after is not null))
