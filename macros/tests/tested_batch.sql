{% macro tested_batch_property() %}
    {#- The Iceberg table property in which an incremental model records the batch it last wrote. -#}
    {{ return('cdc_lake.tested_batch') }}
{% endmacro %}


{% macro tested_batch_note(watermark, column='landing_seq') %}
    {#- a unit test renders the model too: it writes nothing, so no note -#}
    {%- if not execute or model.resource_type != 'model' or not is_incremental() -%}
        {{ return('') }}
    {%- endif -%}
    {%- set after = none if is_first_build(watermark) else watermark -%}
    {{ return(' /* cdc_lake tested batch: ' ~ tojson({'column': column, 'after': after}) ~ ' */') }}
{% endmacro %}


{% macro tested_batch_record(relation) %}
    {#- every test runs after the models it reads, so the first read is the current record -#}
    {%- set records = build_memo().setdefault('tested_batches', {}) -%}
    {%- if relation | string not in records -%}
        {%- set recorded = relation_property(relation, tested_batch_property()) -%}
        {%- do records.update({relation | string: none if recorded is none else fromjson(recorded)}) -%}
    {%- endif -%}
    {{ return(records[relation | string]) }}
{% endmacro %}


{% macro tested_batch(relation, own_batch=false) %}
    {#- The SQL condition that keeps the rows `relation`'s last incremental build wrote (from the
        record of record_tested_batch_sql), or none when a test must read the whole table: var
        `cdc_check_all` is true, the relation's last build was a first or full-refresh build, the
        table does not exist yet, or the relation is neither an incremental model nor a view
        over one (batch_view_model). For a view, `<column> >= <floor>` on the column the model
        recorded (the view passes it through unchanged): every row the build wrote, and at
        most a few more. For the model itself, the per-format condition of landed_after, and the
        floor as well (batch_floor), which the first implies but which lets Iceberg skip every
        data file an older build wrote. With `own_batch`, the rows of the last build's own batch
        even while earlier batches' tests are pending (the record's `own`). -#}
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
    {%- set floor = batch_floor(source, written, record['column']) -%}
    {%- if is_view -%}
        {#- a view: without its model's format column, the floor alone -#}
        {{ return(record['column'] ~ ' >= ' ~ floor if floor is not none else 'false') }}
    {%- endif -%}
    {{ return(written if floor is none else '(' ~ written ~ ' and ' ~ record['column'] ~ ' >= ' ~ floor ~ ')') }}
{% endmacro %}


{% macro model_of_relation(relation) %}
    {#- The model node whose relation `relation` is, or none. -#}
    {%- for node in graph.nodes.values()
           if node.resource_type == 'model' and node.schema == relation.schema
              and node.alias == relation.identifier -%}
        {{ return(node) }}
    {%- endfor -%}
    {{ return(none) }}
{% endmacro %}


{% macro batch_view_model(node) %}
    {#- For a view over exactly one incremental model with the row key columns (batch_key_models:
        cdc_current, a typed view), that model; for a view over no such model but exactly one
        incremental model of any kind (a staging view over its base model), that one. The rows
        of the model's last batch are the view's rows that show them. Else none. -#}
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
    {#- The least `column` among the rows of `relation` that `written` keeps (the last build's
        rows), as a literal, or none when there are none. Landing sequences grow from batch to
        batch, so the data files of older builds hold only lower values, and `column >= floor`
        lets Iceberg skip them by their min/max statistics, which the per-format condition alone
        does not (a file of a first build holds every format's sequences). One narrow query per
        relation and table version: kept for the invocation (build_memo) and, by
        record_test_passes, in the build cache, so a build with nothing landed queries nothing. -#}
    {%- set memo = build_memo().setdefault('batch_floors', {}) -%}
    {%- set key = batch_floor_property(relation) -%}
    {%- set version = local_md5(table_version(relation) ~ ' ' ~ written) -%}
    {%- if key not in memo -%}
        {%- set kept = fromjson(build_cache_get(key) or '{}') -%}
        {%- if kept.get('version') == version -%}
            {%- do memo.update({key: kept}) -%}
        {%- else -%}
            {%- set value = run_query('select min(' ~ column ~ ') from ' ~ relation ~ ' where ' ~ written).columns[0].values()[0] -%}
            {%- do memo.update({key: {'version': version, 'floor': none if value is none else value | int, 'new': true}}) -%}
        {%- endif -%}
    {%- endif -%}
    {{ return(memo[key]['floor']) }}
{% endmacro %}


{% macro batch_floor_property(relation) %}
    {#- The build cache entry with `relation`'s batch floor and the table version it holds for. -#}
    {{ return('cdc_lake.batch_floor.' ~ relation) }}
{% endmacro %}


{% macro tested_keys() %}
    {#- The keys a data test with `__cdc_batch_keys__` reads, the same for every relation it reads:
        each key that the last build of any incremental model the test reads (batch_key_models:
        one with the row key columns, cdc_row_key_columns, read directly or through views) wrote,
        as a select of those columns. One key set for all, because two models compared row by row
        (current_matches_replay) must be cut alike: each cut to its own batch differs after a
        build that was killed between the two models (the next build writes the change log's
        batch empty and cdc_current's whole), and the comparison then fails on correct tables.
        None, to read whole tables, when any such model's last build recorded no batch
        (tested_batch), or when the test reads no such model. Reads the test node (`model` in a
        data test's context) and the graph; one `show tblproperties` per such model. -#}
    {%- set keys = cdc_row_key_columns() -%}
    {%- set selects = [] -%}
    {%- for node in batch_key_models(model.depends_on.nodes) -%}
        {%- set relation = api.Relation.create(database=node.database, schema=node.schema,
                                               identifier=node.alias) -%}
        {%- set batch = tested_batch(relation) -%}
        {%- if batch is none -%}
            {{ return(none) }}
        {%- endif -%}
        {%- do selects.append('select ' ~ keys | join(', ') ~ ' from ' ~ relation ~ ' where ' ~ batch) -%}
    {%- endfor -%}
    {{ return(selects | join(' union ') if selects else none) }}
{% endmacro %}


{% macro batch_key_models(node_ids, found=none, keyed=true) %}
    {#- The incremental models with the row key columns that the nodes read, directly or through
        views and ephemeral models (cdc_current is a view of cdc_history: its rows change only for
        the keys cdc_history's batch touched, and batch_cut_allowed makes sure the view's SQL did
        not change either), each once, in the order first met. With `keyed` false, every
        incremental model they so read, with the key columns or not. -#}
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


{% macro tested_keys_are_few(tested) %}
    {#- Whether the key set `tested` (tested_keys) has at most var `cdc_broadcast_max_rows` rows
        (a key once per row of the batch that holds it: what a broadcast holds), so that a test
        may broadcast it (batch_keys_semi_join) rather than shuffle and sort the whole table it
        cuts. Counted once per key set: the count is kept for the invocation
        (tested_key_counts) and, by record_test_passes, in the build cache, so that a build with
        nothing landed, whose tests read the same keys as the last one, counts nothing. -#}
    {%- set counts = tested_key_counts() -%}
    {%- set name = local_md5(tested) -%}
    {%- if name not in counts['used'] -%}
        {%- set known = counts['known'].get(name) -%}
        {%- do counts['used'].update({name: known if known is not none else
            run_query('select count(*) from (' ~ tested ~ ')').columns[0].values()[0] | int}) -%}
    {%- endif -%}
    {{ return(counts['used'][name] <= var('cdc_broadcast_max_rows', 200000) | int) }}
{% endmacro %}


{% macro tested_key_counts_property() %}
    {#- The build cache entry with the key counts of the last invocation's tests (tested_keys_are_few). -#}
    {{ return('cdc_lake.tested_key_counts') }}
{% endmacro %}


{% macro tested_key_counts() %}
    {#- This invocation's key counts (build_memo): `known`, what the build cache kept from the last
        invocation that counted (MD5 of a key set's select -> count), and `used`, those this
        invocation's tests asked for. -#}
    {%- set memo = build_memo() -%}
    {%- if 'tested_key_counts' not in memo -%}
        {%- set kept = build_cache_get(tested_key_counts_property()) -%}
        {%- do memo.setdefault('tested_key_counts', {'known': fromjson(kept) if kept else {}, 'used': {}}) -%}
    {%- endif -%}
    {{ return(memo['tested_key_counts']) }}
{% endmacro %}


{% macro batch_keys_semi_join(relation, tested) %}
    {#- The rows of `relation` whose keys are in `tested` (tested_keys), as a subquery without alias:
        a left semi join on the row key columns with the keys broadcast. Spark plans the same cut
        written as `(keys) in (select ...)` as a sort-merge join, since it cannot tell how few keys a
        filtered scan returns: it then shuffles every row of the table (985k change-log rows in full
        width at 1M) to keep a few thousand. Key columns are never null (the change log's
        not_null tests), so `=` keeps what `in` keeps. -#}
    {{ return('(select /*+ broadcast(cdc_batch_keys) */ cdc_cut.* from ' ~ relation ~ ' as cdc_cut'
              ~ ' left semi join (' ~ tested ~ ') as cdc_batch_keys on '
              ~ join_on_keys('cdc_cut', 'cdc_batch_keys', relation_key_columns(relation)) ~ ')') }}
{% endmacro %}


{% macro relation_key_columns(relation) %}
    {#- The row key columns (cdc_row_key_columns) that `relation` has, by its documented columns: all
        of them for the core models, `source_system` and `row_key` for a typed view, whose rows
        are of one source table. Cut on those, the view keeps the rows of every touched key of its
        table, and of any other touched key with the same row key: more rows, never fewer. -#}
    {%- set node = model_of_relation(relation) -%}
    {%- set keys = cdc_row_key_columns() -%}
    {%- if node is none or not node.columns -%}
        {{ return(keys) }}
    {%- endif -%}
    {%- set present = keys | select('in', node.columns) | list -%}
    {{ return(present if present else keys) }}
{% endmacro %}


{% macro spark__get_where_subquery(relation) %}
    {#- dbt's `where` config of a data test, with two placeholders for the large incremental models:
        - `__cdc_batch__`: the rows the model's last build wrote (tested_batch);
        - `__cdc_batch_keys__`: every row of the source rows (cdc_row_key_columns) that build
          touched, for tests that compare rows of one key (uniqueness, version chains). The keys
          are those of tested_keys: of every incremental model the test reads, so a test that
          reads a second model (and calls this macro on it too) cuts both sides alike. As the
          whole `where`, and with few keys (tested_keys_are_few), a broadcast semi join
          (batch_keys_semi_join); otherwise `(keys) in (select ...)`.
        Either stands for the whole table when tested_batch says so (var `cdc_check_all`, a first or
        full-refresh build, a model that records no batch), or when the test has not passed since
        a view it reads was redefined (batch_cut_allowed). -#}
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
        {%- if tested is not none and where | trim == '__cdc_batch_keys__' and tested_keys_are_few(tested) -%}
            {%- do log('cdc_lake: ' ~ model.name ~ ': reads ' ~ relation.identifier ~ ' cut to the keys of the last batch', info=true) -%}
            {{ return(batch_keys_semi_join(relation, tested)) }}
        {%- endif -%}
        {%- do log('cdc_lake: ' ~ model.name ~ ': reads ' ~ relation.identifier ~ ' cut to '
                   ~ ('the keys of the last batch' if tested is not none else 'the last batch'), info=true) -%}
        {%- set keys = relation_key_columns(relation) | join(', ') -%}
        {%- set batch_keys = 'true' if tested is none else
            '(' ~ keys ~ ') in (select ' ~ keys ~ ' from (' ~ tested ~ '))' -%}
        {%- set where = where
            | replace('__cdc_batch_keys__', batch_keys)
            | replace('__cdc_batch__', 'true' if batch is none else batch) -%}
    {%- endif -%}
    {#- no alias (Spark names a bare subquery itself), so a test may give it one: `{{ model }} as x` -#}
    {{ return('(select * from ' ~ relation ~ ' where ' ~ where ~ ')') }}
{% endmacro %}
