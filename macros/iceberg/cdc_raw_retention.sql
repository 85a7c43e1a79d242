{% macro cdc_raw_retention(days=none) %}
    {%- set days = var('cdc_raw_retention_days', none) if days is none else days %}
    {%- if days is none %}
        {{ log('cdc_raw_retention: var cdc_raw_retention_days is not set: raw records are kept', info=true) }}
        {{ return('') }}
    {%- endif %}
    {%- if days is string or days is boolean or days is not number or days < 0 %}
        {{ exceptions.raise_compiler_error(
            "cdc_raw_retention: cdc_raw_retention_days must be a number of days, 0 or more, or null; got " ~ days) }}
    {%- endif %}
    {%- set now = run_query("select cast(current_timestamp() as string)").columns[0].values()[0] %}
    {%- set cutoff = "timestamp '" ~ cdc_hours_before(now, days * 24) ~ "'" %}
    {%- set rejects = _cdc_model_relation('cdc_rejected_messages') %}
    {%- set marks = {
        'dml': _cdc_landing_marks(_cdc_model_relation('cdc_changelog')),
        'ddl': _cdc_landing_marks(_cdc_model_relation('cdc_schema_changes')),
        'rejected': _cdc_landing_marks(rejects),
    } %}
    {%- set register = raw_schema() ~ '.cdc_set_aside_records' %}
    {%- set has_register = run_query("show tables in " ~ raw_schema() ~ " like 'cdc_set_aside_records'") | length > 0 %}
    {%- set written = [] %}
    {%- for fmt in cdc_formats() %}
        {%- set base = _cdc_model_relation('base_' ~ fmt ~ '__messages') %}
        {%- set raw = raw_schema() ~ '.raw_' ~ fmt %}
        {%- set base_read = none if base is none
            else run_query('select max(landing_seq) from ' ~ base).columns[0].values()[0] %}
        {%- if base_read is not none %}
            {#- a staged message is removed once every model that reads its kind has read it (that
                model's rows of the format reach its landing); control messages feed only views -#}
            {%- set read_by_all %}
                landed_at < {{ cutoff }} and (
                    record_kind = 'control'
                    {%- for kind, kind_marks in marks | dictsort %}
                    or (record_kind = '{{ kind }}' and landing_seq <= {{ kind_marks.get(fmt, -1) }})
                    {%- endfor %}
                )
            {%- endset %}
            {%- set staged = cdc_count(base ~ ' where ' ~ read_by_all) %}
            {%- if staged > 0 %}
                {%- do run_query('delete from ' ~ base ~ ' where ' ~ read_by_all) %}
                {%- do written.append(base | string) %}
            {%- endif %}
            {#- a raw record goes with the last of its staged messages: one the base model read
                (or set aside) and of which no message is left -#}
            {%- set gone %}
                select raw.kafka_topic, raw.kafka_partition, raw.kafka_offset, raw.landing_seq
                from {{ raw }} as raw
                    left anti join {{ base }} as staged
                        on
                            staged.kafka_topic = raw.kafka_topic
                            and staged.kafka_partition = raw.kafka_partition
                            and staged.kafka_offset = raw.kafka_offset
                            and staged.landing_seq = raw.landing_seq
                where raw.landed_at < {{ cutoff }} and raw.landing_seq <= {{ base_read }}
            {%- endset %}
            {%- set records = cdc_count('(' ~ gone ~ ') as gone') %}
            {%- if records > 0 %}
                {%- do run_query(
                    'merge into ' ~ raw ~ ' as raw using (' ~ gone ~ ') as gone'
                    ~ ' on raw.kafka_topic = gone.kafka_topic and raw.kafka_partition = gone.kafka_partition'
                    ~ ' and raw.kafka_offset = gone.kafka_offset and raw.landing_seq = gone.landing_seq'
                    ~ ' when matched then delete') %}
                {%- do written.append(raw) %}
            {%- endif %}
            {%- if has_register %}
                {%- set set_aside = "source_format = '" ~ fmt ~ "' and landed_at < " ~ cutoff
                    ~ " and landing_seq <= " ~ base_read %}
                {%- if cdc_count(register ~ ' where ' ~ set_aside) > 0 %}
                    {%- do run_query('delete from ' ~ register ~ ' where ' ~ set_aside) %}
                    {%- do written.append(register) %}
                {%- endif %}
            {%- endif %}
            {{ log('cdc_raw_retention: ' ~ fmt ~ ': ' ~ records ~ ' raw records and ' ~ staged
                   ~ ' staged messages landed before ' ~ cutoff ~ ' removed', info=true) }}
        {%- endif %}
    {%- endfor %}
    {%- if rejects is not none %}
        {%- set cleared = 'landed_at < ' ~ cutoff ~ ' and raw_value is not null' %}
        {%- set rejected = cdc_count(rejects ~ ' where ' ~ cleared) %}
        {%- if rejected > 0 %}
            {%- do run_query('update ' ~ rejects ~ ' set raw_value = null where ' ~ cleared) %}
            {%- do written.append(rejects | string) %}
        {%- endif %}
        {{ log('cdc_raw_retention: cdc_rejected_messages: raw_value of ' ~ rejected ~ ' rejects cleared', info=true) }}
    {%- endif %}
    {#- the files that held the removed values leave with every snapshot before this one -#}
    {%- set expire_before = run_query("select cast(current_timestamp() as string)").columns[0].values()[0] %}
    {%- for table in written | unique %}
        {%- if _cdc_landing_in_flight(table) %}
            {{ log('cdc_raw_retention: ' ~ table ~ ': a landing is in flight; its old snapshots expire next time',
                   info=true) }}
        {%- else %}
            {%- set expired = run_query(
                "call spark_catalog.system.expire_snapshots(table => '" ~ table ~ "', older_than => timestamp '"
                ~ expire_before ~ "', retain_last => 1)") %}
            {{ log('cdc_raw_retention: ' ~ table ~ ': ' ~ (expired.rows[0] | map('int') | sum)
                   ~ ' files of expired snapshots removed', info=true) }}
        {%- endif %}
    {%- endfor %}
{% endmacro %}

{% macro _cdc_model_relation(name) %}
    {%- set node = graph.nodes.get('model.' ~ project_name ~ '.' ~ name) %}
    {%- if node is none %}
        {{ return(none) }}
    {%- endif %}
    {{ return(adapter.get_relation(node.database, node.schema, node.alias or node.name)) }}
{% endmacro %}

{% macro _cdc_landing_marks(relation) %}
    {%- set marks = {} %}
    {%- if relation is not none %}
        {%- for row in run_query('select source_format, max(landing_seq) from ' ~ relation
                                 ~ ' where source_format is not null group by source_format') %}
            {%- do marks.update({row[0]: row[1] | int}) %}
        {%- endfor %}
    {%- endif %}
    {{ return(marks) }}
{% endmacro %}

{% macro _cdc_landing_in_flight(table) %}
    {#- a landing stages its snapshot (write-audit-publish) and publishes it under a new id: a
        staged snapshot not yet published must not be expired under it (one older than an hour
        was given up) -#}
    {%- set staged = cdc_count(
        table ~ ".snapshots as staged where staged.summary['wap.id'] is not null"
        ~ " and coalesce(cast(staged.summary['added-records'] as bigint), 0) > 0"
        ~ " and staged.committed_at > current_timestamp() - interval 1 hour"
        ~ " and not exists (select 1 from " ~ table ~ ".snapshots as published"
        ~ " where published.summary['published-wap-id'] = staged.summary['wap.id'])") %}
    {{ return(staged > 0) }}
{% endmacro %}
