{% macro spark__get_test_sql(main_sql, fail_calc, warn_if, error_if, limit) %}
    {%- set fingerprint = test_fingerprint(main_sql, fail_calc, warn_if, error_if) -%}
    {%- set last = (last_test_pass(model.unique_id) or '').split(' ') -%}
    {%- if fingerprint is not none and fingerprint == last[0] and reuse_passes() -%}
        {%- set failures = last[1] | int if last | length > 1 else 0 -%}
        {%- do answered_tests().update({model.unique_id: fingerprint}) -%}
        {%- do log('cdc_lake: ' ~ model.name ~ ': answered from its last pass (SQL and inputs unchanged), no query', info=true) -%}
        select
            {{ failures }} as failures,
            {{ failures }} {{ warn_if }} as should_warn,
            {{ failures }} {{ error_if }} as should_error
        /* cdc_lake: inputs and SQL unchanged since this test's last pass ({{ fingerprint }}) */
    {%- else -%}
        {%- set views = test_view_versions() -%}
        {%- if fingerprint is not none or views is not none -%}
            {%- do pending_test_passes().update({model.unique_id: {'fingerprint': fingerprint, 'views': views}}) -%}
        {%- endif -%}
        {{ default__get_test_sql(main_sql, fail_calc, warn_if, error_if, limit) }}
    {%- endif -%}
{% endmacro %}

{% macro test_fingerprint(main_sql, fail_calc, warn_if, error_if) %}
    {%- if not execute or flags.WHICH not in ('build', 'test', 'retry')
           or var('cdc_check_all') | string | lower == 'true' or should_store_failures()
           or modules.re.search('(?i)current_(timestamp|date)|\\bnow\\s*\\(|\\brand(n)?\\s*\\(|\\buuid\\s*\\(', main_sql) -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set versions = input_versions(model.depends_on.nodes) -%}
    {%- if versions is none or versions | length == 0 -%}
        {{ return(none) }}
    {%- endif -%}
    {{ return(local_md5(versions | join('\n') ~ '\n' ~ [fail_calc, warn_if, error_if] | join('|') ~ '\n' ~ without_cache_notes(main_sql))) }}
{% endmacro %}

{% macro last_test_pass(test_id) %}
    {{ return(build_cache_get(test_pass_property(test_id))) }}
{% endmacro %}

{% macro test_pass_property(test_id) %}
    {{ return('cdc_lake.pass.' ~ test_id) }}
{% endmacro %}

{% macro test_views_property(test_id) %}
    {{ return('cdc_lake.views.' ~ test_id) }}
{% endmacro %}

{% macro test_view_versions() %}
    {%- if not execute or '__cdc_batch' not in (config.get('where') or '') -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set views = input_versions(model.depends_on.nodes, views_only=true) -%}
    {{ return(none if views is none else local_md5('views:' ~ views | join(';'))) }}
{% endmacro %}

{% macro batch_cut_allowed() %}
    {%- set recorded = build_cache_get(test_views_property(model.unique_id)) -%}
    {{ return(recorded is not none and recorded == test_view_versions()) }}
{% endmacro %}

{% macro pending_test_passes() %}
    {{ return(build_memo().setdefault('pending_test_passes', {})) }}
{% endmacro %}

{% macro record_test_passes(results) %}
    {%- if not execute or flags.WHICH not in ('build', 'test', 'retry', 'run') -%}
        {{ return('') }}
    {%- endif -%}
    {#- what nodes computed while they compiled (typed column lists, batch floors, key counts),
        from the notes in their SQL (cache_notes): a compile writes nothing -#}
    {%- set entries = {} -%}
    {%- for key, value in cache_notes(results) -%}
        {%- do entries.update({key: tojson(value)}) -%}
    {%- endfor -%}
    {%- set pending = pending_test_passes() -%}
    {%- for result in results
           if result.node.resource_type == 'test' and result.status in ('pass', 'warn')
              and result.node.unique_id in pending -%}
        {%- set ran = pending[result.node.unique_id] -%}
        {%- if ran['fingerprint'] is not none -%}
            {#- a warning keeps its failure count beside the fingerprint, to be shown again -#}
            {%- do entries.update({test_pass_property(result.node.unique_id): ran['fingerprint']
                ~ ((' ' ~ result.failures) if result.status == 'warn' else '')}) -%}
        {%- endif -%}
        {#- only a pass vouches for the rows under the views it read (batch_cut_allowed) -#}
        {%- if ran['views'] is not none and result.status == 'pass' -%}
            {%- do entries.update({test_views_property(result.node.unique_id): ran['views']}) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- do build_cache_put(entries) -%}
    {{ return('') }}
{% endmacro %}

{% macro reuse_passes() %}
    {{ return(var('cdc_reuse_passes') | string | lower != 'false') }}
{% endmacro %}

{% macro answered_tests() %}
    {{ return(build_memo().setdefault('answered_tests', {})) }}
{% endmacro %}

{% macro kept_seeds() %}
    {{ return(build_memo().setdefault('kept_seeds', {})) }}
{% endmacro %}

{% macro report_shortcuts(results) %}
    {%- if not execute or flags.WHICH not in ('build', 'test', 'retry') -%}
        {{ return('') }}
    {%- endif -%}
    {%- set counts = {'tests': 0, 'answered': 0, 'seeds': 0, 'kept': 0} -%}
    {%- for result in results if result.status != 'skipped' -%}
        {%- if result.node.resource_type == 'test' -%}
            {%- do counts.update({'tests': counts['tests'] + 1,
                                  'answered': counts['answered'] + (1 if result.node.unique_id in answered_tests() else 0)}) -%}
        {%- elif result.node.resource_type == 'seed' -%}
            {%- do counts.update({'seeds': counts['seeds'] + 1,
                                  'kept': counts['kept'] + (1 if result.node.unique_id in kept_seeds() else 0)}) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- do log('cdc_lake: ' ~ counts['answered'] ~ ' of ' ~ counts['tests'] ~ ' data tests answered from a recorded pass'
               ~ ' (SQL and inputs unchanged), ' ~ counts['kept'] ~ ' of ' ~ counts['seeds'] ~ ' seeds kept as loaded'
               ~ ('' if reuse_passes() else ' (cdc_reuse_passes is false)')
               ~ "; --vars '{cdc_reuse_passes: false}' runs every test and reloads every seed,"
               ~ ' dbt run-operation cdc_forget_passes forgets every pass and batch record (docs/table_properties.md)',
               info=true) -%}
    {{ return('') }}
{% endmacro %}
