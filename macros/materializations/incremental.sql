{% materialization incremental, adapter='spark' %}

    {#- 1. What this build is: a full build (no table yet, or --full-refresh) writes the whole
        table; an incremental one writes its batch. -#}
    {%- set existing = load_relation(this) -%}
    {%- set full_build = existing is none or existing.is_view or should_full_refresh() -%}
    {%- set batch = batch_notes(model.compiled_code) -%}
    {{ run_hooks(pre_hooks) }}

    {#- 2. An empty batch writes nothing: the table keeps its Iceberg snapshot. Without notes, one
        `limit 1` query over the batch says. -#}
    {%- set has_rows = batch['rows'] -%}
    {%- if not full_build and has_rows is none -%}
        {%- set has_rows = run_query('select 1 from (' ~ sql ~ ') as batch limit 1') | length > 0 -%}
    {%- endif -%}
    {%- if not full_build and not has_rows -%}
        {#- no statement: the message is the build output's for this model, the text its target/run file -#}
        {%- call noop_statement('main', 'no new rows, nothing written', 'SKIP') -%}
            -- no new rows for {{ this }}: nothing written
        {%- endcall -%}
        {{ run_hooks(post_hooks) }}
        {{ return({'relations': [this]}) }}
    {%- endif -%}

    {#- 3. The record of the batch this build writes (table property `cdc_lake.tested_batch`),
        before the write: until the write commits, no row lies beyond it. The invocation's copy of
        the catalog's records (tested_batch_record) learns it too, so its tests need not read it. -#}
    {%- if not full_build and flags.WHICH in ('run', 'build') and batch['tested'] is not none -%}
        {%- do run_query(record_tested_batch_sql(batch['tested'])) -%}
        {%- do build_memo().setdefault('tested_batches', {}).update(
            {this | string: batch['tested'] if batch['tested']['after'] is not none else none}) -%}
    {%- endif -%}

    {#- 4. The write. -#}
    {%- if full_build -%}
        {%- if existing is not none -%}
            {%- do adapter.drop_relation(existing) -%}
        {%- endif -%}
        {%- call statement('main') -%}
            {{ create_table_as(false, this, sql) }}
        {%- endcall -%}
    {%- else -%}
        {#- the batch inline; a model that may add columns reads it through a temporary view,
            which dbt compares with the table first -#}
        {%- set on_schema_change = incremental_validate_on_schema_change(config.get('on_schema_change'), default='ignore') -%}
        {%- set batch_relation = '(' ~ sql ~ ')' -%}
        {%- if on_schema_change != 'ignore' -%}
            {%- set batch_relation = this.incorporate(path={'identifier': this.identifier ~ '__dbt_tmp'}).include(database=false, schema=false) -%}
            {%- call statement('create_batch_view') -%}
                create or replace temporary view {{ batch_relation }} as {{ sql }}
            {%- endcall -%}
            {%- do process_schema_changes(on_schema_change, batch_relation, existing) -%}
        {%- endif -%}
        {%- set columns = adapter.get_columns_in_relation(this) | map(attribute='quoted') | list -%}
        {%- call statement('main') -%}
            {%- if (config.get('incremental_strategy') or 'append') == 'append' %}
            insert into table {{ this }}
            select {{ columns | join(', ') }} from {{ batch_relation }} as batch
            {%- else %}
            {{ merge_batch_sql(batch_relation, columns) }}
            {%- endif %}
        {%- endcall -%}
    {%- endif -%}

    {% do persist_docs(this, model) %}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': [this]}) }}
{% endmaterialization %}

{% macro merge_batch_sql(batch_relation, columns) %}
    {%- set keys = config.get('unique_key') -%}
    {%- set keys = [keys] if keys is string else keys -%}
    {%- set action = config.get('merge_action_column') -%}
    merge into {{ this }} as target
    using {{ batch_relation }} as batch
    on {% for key in keys %}batch.{{ key }} = target.{{ key }}{{ ' and ' if not loop.last }}{% endfor %}
    {%- if action %}
    when matched and batch.{{ action }} = 'delete' then delete
    {%- endif %}
    {%- if not config.get('merge_insert_only', false) %}
    when matched then update set
        {%- for column in columns %}
        {{ column }} = batch.{{ column }}{{ ',' if not loop.last }}
        {%- endfor %}
    {%- endif %}
    when not matched {%- if action %} and batch.{{ action }} = 'upsert'{% endif %} then insert
        ({{ columns | join(', ') }})
        values ({% for column in columns %}batch.{{ column }}{{ ', ' if not loop.last }}{% endfor %})
{% endmacro %}

{% macro batch_notes(compiled_sql) %}
    {%- set found = modules.re.findall('/\\* cdc_lake batch: (new rows|empty) \\*/', compiled_sql) -%}
    {%- set tested = modules.re.findall('/\\* cdc_lake tested batch: (.*?) \\*/', compiled_sql) -%}
    {{ return({
        'rows': ('new rows' in found) if found else none,
        'tested': fromjson(tested[0]) if tested else none,
    }) }}
{% endmacro %}

{% macro record_tested_batch_sql(record) %}
    {%- if record['after'] is none -%}
        {{ return("alter table " ~ this ~ " unset tblproperties if exists ('" ~ tested_batch_property() ~ "')") }}
    {%- endif -%}
    {%- set previous = relation_property(this, tested_batch_property()) -%}
    {%- set previous = fromjson(previous) if previous else none -%}
    {#- a batch whose tests a `cdc-lake build --tests-every` cycle deferred stays the start of the
        cut until a build runs them: the next tested build checks every batch since -#}
    {%- set own = record['after'] -%}
    {%- if previous is not none and previous.get('pending') and previous['column'] == record['column'] -%}
        {%- do record.update({'after': previous['after']}) -%}
    {%- endif -%}
    {%- if var('cdc_defer_tests') | string | lower == 'true' -%}
        {%- do record.update({'pending': true, 'own': own}) -%}
    {%- endif -%}
    {{ return("alter table " ~ this ~ " set tblproperties ('" ~ tested_batch_property()
              ~ "' = " ~ sql_string_literal(tojson(record)) ~ ")") }}
{% endmacro %}
