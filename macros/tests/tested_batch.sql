{% macro tested_batch_property() %}
    {{ return('cdc_lake.tested_batch') }}
{% endmacro %}

{% macro tested_batch_note(watermark, column='landing_seq') %}
    {%- if not execute or model.resource_type != 'model' or not is_incremental() -%}
        {{ return('') }}
    {%- endif -%}
    {%- set after = none if is_first_build(watermark) else watermark -%}
    {{ return(' /* cdc_lake tested batch: ' ~ tojson({'column': column, 'after': after}) ~ ' */') }}
{% endmacro %}

{% macro tested_batch_record(relation) %}
    {%- set records = build_memo().setdefault('tested_batches', {}) -%}
    {%- if relation | string not in records -%}
        {%- set recorded = relation_property(relation, tested_batch_property()) -%}
        {%- do records.update({relation | string: none if recorded is none else fromjson(recorded)}) -%}
    {%- endif -%}
    {{ return(records[relation | string]) }}
{% endmacro %}

{% macro tested_batch(relation, own_batch=false) %}
    {%- if not execute or var('cdc_check_all') | string | lower == 'true' -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set node = model_of_relation(relation) -%}
    {%- if node is none -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set is_view = node.config.materialized != 'incremental' -%}
    {%- set source_node = batch_view_model(node) if is_view else node -%}
    {#- not built yet (e.g. `dbt compile` or sqlfluff on a fresh lake): nothing to read either way -#}
    {%- if source_node is none or load_relation(relation) is none -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set source = api.Relation.create(database=source_node.database, schema=source_node.schema,
                                         identifier=source_node.alias) -%}
    {%- set record = tested_batch_record(source) -%}
    {%- if record is none -%}
        {{ return(none) }}
    {%- endif -%}
    {#- a view is cut by the recorded column only when it shows that column as its model does -#}
    {%- if is_view and (source_node.columns.get(record['column']) is none
                        or node.columns.get(record['column']) is none) -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set after = record.get('own', record['after']) if own_batch else record['after'] -%}
    {%- set written = landed_after(after, record['column']) -%}
    {%- set found = batch_floor(source, written, record['column']) -%}
    {%- set floor = found['floor'] -%}
    {#- a floor this build queried travels in the test's SQL to the on-run-end (record_test_passes) -#}
    {%- set note = cache_note(batch_floor_property(source),
                              {'version': found['version'], 'floor': floor, 'rows': found['rows']})
                   if found.get('new') else '' -%}
    {%- if is_view -%}
        {#- a view: without its model's format column, the floor alone -#}
        {{ return((record['column'] ~ ' >= ' ~ floor if floor is not none else 'false') ~ note) }}
    {%- endif -%}
    {{ return((written if floor is none else '(' ~ written ~ ' and ' ~ record['column'] ~ ' >= ' ~ floor ~ ')') ~ note) }}
{% endmacro %}

{% macro model_of_relation(relation) %}
    {%- for node in graph.nodes.values()
           if node.resource_type == 'model' and node.schema == relation.schema
              and node.alias == relation.identifier -%}
        {{ return(node) }}
    {%- endfor -%}
    {{ return(none) }}
{% endmacro %}

{% macro batch_view_model(node) %}
    {%- if node.config.materialized not in ('view', 'ephemeral') -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set models = batch_key_models(node.depends_on.nodes) -%}
    {%- if models | length == 0 -%}
        {%- set models = batch_key_models(node.depends_on.nodes, keyed=false) -%}
    {%- endif -%}
    {{ return(models[0] if models | length == 1 else none) }}
{% endmacro %}

{% macro batch_floor(relation, written, column) %}
    {%- set memo = build_memo().setdefault('batch_floors', {}) -%}
    {%- set key = batch_floor_property(relation) -%}
    {%- set version = local_md5(table_version(relation) ~ ' ' ~ written ~ ' rows') -%}
    {%- if key not in memo -%}
        {%- set kept = fromjson(build_cache_get(key) or '{}') -%}
        {%- if kept.get('version') == version -%}
            {%- do memo.update({key: kept}) -%}
        {%- else -%}
            {%- set found = run_query('select min(' ~ column ~ '), count(*) from ' ~ relation ~ ' where ' ~ written).rows[0] -%}
            {%- do memo.update({key: {'version': version, 'floor': none if found[0] is none else found[0] | int,
                                      'rows': found[1] | int, 'new': true}}) -%}
        {%- endif -%}
    {%- endif -%}
    {{ return(memo[key]) }}
{% endmacro %}

{% macro batch_floor_property(relation) %}
    {{ return('cdc_lake.batch_floor.' ~ relation) }}
{% endmacro %}

{% macro tested_keys() %}
    {%- set keys = cdc_row_key_columns() -%}
    {%- set selects = [] -%}
    {%- set written = namespace(rows=0) -%}
    {%- for node in batch_key_models(model.depends_on.nodes) -%}
        {%- set relation = api.Relation.create(database=node.database, schema=node.schema,
                                               identifier=node.alias) -%}
        {%- set batch = tested_batch(relation) -%}
        {%- if batch is none -%}
            {{ return(none) }}
        {%- endif -%}
        {%- do selects.append('select ' ~ keys | join(', ') ~ ' from ' ~ relation ~ ' where ' ~ batch) -%}
        {%- set written.rows = written.rows + build_memo()['batch_floors'][batch_floor_property(relation)]['rows'] -%}
    {%- endfor -%}
    {{ return({'sql': selects | join(' union '), 'rows': written.rows} if selects else none) }}
{% endmacro %}

{% macro batch_key_models(node_ids, found=none, keyed=true) %}
    {%- set found = [] if found is none else found -%}
    {%- set keys = cdc_row_key_columns() if keyed else [] -%}
    {%- for node_id in node_ids -%}
        {%- set node = graph.nodes.get(node_id) -%}
        {%- if node and node.resource_type == 'model'
               and node.unique_id not in found | map(attribute='unique_id') | list -%}
            {%- if node.config.materialized == 'incremental'
                   and keys | reject('in', node.columns) | list | length == 0 -%}
                {%- do found.append(node) -%}
            {%- elif node.config.materialized in ('view', 'ephemeral') -%}
                {%- do batch_key_models(node.depends_on.nodes, found, keyed) -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(found) }}
{% endmacro %}

{% macro batch_keys_semi_join(relation, tested) %}
    {{ return('(select /*+ broadcast(cdc_batch_keys) */ cdc_cut.* from ' ~ relation ~ ' as cdc_cut'
              ~ ' left semi join (' ~ tested ~ ') as cdc_batch_keys on '
              ~ join_on_keys('cdc_cut', 'cdc_batch_keys', relation_key_columns(relation)) ~ ')') }}
{% endmacro %}

{% macro relation_key_columns(relation) %}
    {%- set node = model_of_relation(relation) -%}
    {%- set keys = cdc_row_key_columns() -%}
    {%- if node is none or not node.columns -%}
        {{ return(keys) }}
    {%- endif -%}
    {%- set present = keys | select('in', node.columns) | list -%}
    {{ return(present if present else keys) }}
{% endmacro %}

{% macro spark__get_where_subquery(relation) %}
    {%- set where = config.get('where') -%}
    {%- if not where -%}
        {{ return(relation) }}
    {%- endif -%}
    {%- if '__cdc_batch' in where -%}
        {%- set allowed = batch_cut_allowed() -%}
        {%- set batch = tested_batch(relation) if allowed and '__cdc_batch__' in where else none -%}
        {%- set tested = tested_keys() if allowed and '__cdc_batch_keys__' in where else none -%}
        {%- if batch is none and tested is none and where | trim in ('__cdc_batch__', '__cdc_batch_keys__') -%}
            {#- the plain relation: tests that read it by name (time travel, metadata) still work -#}
            {{ return(relation) }}
        {%- endif -%}
        {#- the batches' keys are at most the rows they wrote: few are broadcast -#}
        {%- if tested is not none and where | trim == '__cdc_batch_keys__'
               and tested['rows'] <= var('cdc_broadcast_max_rows', 200000) | int -%}
            {%- do log('cdc_lake: ' ~ model.name ~ ': reads ' ~ relation.identifier ~ ' cut to the keys of the last batch', info=true) -%}
            {{ return(batch_keys_semi_join(relation, tested['sql'])) }}
        {%- endif -%}
        {%- do log('cdc_lake: ' ~ model.name ~ ': reads ' ~ relation.identifier ~ ' cut to '
                   ~ ('the keys of the last batch' if tested is not none else 'the last batch'), info=true) -%}
        {%- set keys = relation_key_columns(relation) | join(', ') -%}
        {%- set batch_keys = 'true' if tested is none else
            '(' ~ keys ~ ') in (select ' ~ keys ~ ' from (' ~ tested['sql'] ~ '))' -%}
        {%- set where = where
            | replace('__cdc_batch_keys__', batch_keys)
            | replace('__cdc_batch__', 'true' if batch is none else batch) -%}
    {%- endif -%}
    {#- no alias (Spark names a bare subquery itself), so a test may give it one: `{{ model }} as x` -#}
    {{ return('(select * from ' ~ relation ~ ' where ' ~ where ~ ')') }}
{% endmacro %}
