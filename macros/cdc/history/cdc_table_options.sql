{% macro cdc_table_options() %}
    {%- set known = [
        'track_history', 'track_history_except', 'valid_to_current', 'exclude_columns', 'hash_columns',
        'schema_changes',
    ] -%}
    {%- set schema_change_modes = ['evolve', 'ignore_new_columns', 'fail'] -%}
    {%- set timestamp_text = '^[0-9]{4}-[0-9]{2}-[0-9]{2}( [0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]{1,6})?)?$' -%}
    {%- set configured = var('cdc_table_options', {}) or {} -%}
    {%- if configured is not mapping -%}
        {{ exceptions.raise_compiler_error(
            "cdc_table_options must map '<database>.<table>' patterns to options, got " ~ configured) }}
    {%- endif -%}
    {%- set global_valid_to = var('cdc_valid_to_current', none) -%}
    {%- if global_valid_to is not none
           and (global_valid_to is not string or not modules.re.match(timestamp_text, global_valid_to)) -%}
        {{ exceptions.raise_compiler_error(
            "cdc_valid_to_current must be a timestamp text 'yyyy-MM-dd[ HH:mm:ss[.ffffff]]' or null, got "
            ~ global_valid_to) }}
    {%- endif -%}
    {%- set entries = [] -%}
    {%- for pattern, options in configured.items() -%}
        {%- set where = "cdc_table_options['" ~ pattern ~ "']" -%}
        {%- if pattern is not string or not pattern -%}
            {{ exceptions.raise_compiler_error(
                "cdc_table_options: each key must be a non-empty '<database>.<table>' pattern, got " ~ pattern) }}
        {%- endif -%}
        {%- if options is not mapping -%}
            {{ exceptions.raise_compiler_error(
                where ~ ": the options must be a mapping (" ~ known | join(', ') ~ "), got " ~ options) }}
        {%- endif -%}
        {%- for option in options if option not in known -%}
            {{ exceptions.raise_compiler_error(
                where ~ ": unknown option '" ~ option ~ "'; the options are " ~ known | join(', ')) }}
        {%- endfor -%}
        {%- if 'track_history' in options and 'track_history_except' in options -%}
            {{ exceptions.raise_compiler_error(
                where ~ ": set track_history or track_history_except, not both") }}
        {%- endif -%}
        {%- for option in ['track_history', 'track_history_except', 'exclude_columns', 'hash_columns']
               if option in options -%}
            {%- set columns = options[option] -%}
            {%- if columns is string or columns is mapping or columns is not iterable -%}
                {{ exceptions.raise_compiler_error(
                    where ~ ": option '" ~ option ~ "' must be a list of column names, got " ~ columns) }}
            {%- endif -%}
            {%- for column in columns if column is not string or not column -%}
                {{ exceptions.raise_compiler_error(
                    where ~ ": option '" ~ option ~ "' must list non-empty column names, got " ~ column) }}
            {%- endfor -%}
            {%- if option == 'track_history' and columns | length == 0 -%}
                {{ exceptions.raise_compiler_error(
                    where ~ ": option 'track_history' must name at least one column") }}
            {%- endif -%}
        {%- endfor -%}
        {%- for column in options.get('exclude_columns') or []
               if column | lower in (options.get('hash_columns') or []) | map('lower') | list -%}
            {{ exceptions.raise_compiler_error(
                where ~ ": column '" ~ column ~ "' is in both exclude_columns and hash_columns; list it in one") }}
        {%- endfor -%}
        {%- set valid_to = options.get('valid_to_current') -%}
        {%- if valid_to is not none and (valid_to is not string or not modules.re.match(timestamp_text, valid_to)) -%}
            {{ exceptions.raise_compiler_error(
                where ~ ": option 'valid_to_current' must be a timestamp text 'yyyy-MM-dd[ HH:mm:ss[.ffffff]]',"
                ~ " got " ~ valid_to) }}
        {%- endif -%}
        {%- set schema_changes = options.get('schema_changes', 'evolve') -%}
        {%- if schema_changes not in schema_change_modes -%}
            {{ exceptions.raise_compiler_error(
                where ~ ": option 'schema_changes' must be one of " ~ schema_change_modes | join(', ')
                ~ ", got " ~ schema_changes) }}
        {%- endif -%}
        {%- do entries.append({
            'pattern': pattern,
            'track_history': options.get('track_history'),
            'track_history_except': options.get('track_history_except'),
            'valid_to_current': valid_to if 'valid_to_current' in options else global_valid_to,
            'exclude_columns': (options.get('exclude_columns') or []) | map('lower') | list,
            'hash_columns': (options.get('hash_columns') or []) | map('lower') | list,
            'schema_changes': schema_changes,
        }) -%}
    {%- endfor -%}
    {{ return({
        'entries': entries,
        'tracks_history': entries | selectattr('track_history') | list | length > 0
            or entries | selectattr('track_history_except') | list | length > 0,
        'valid_to_current': global_valid_to,
        'sets_valid_to_current': global_valid_to is not none
            or entries | rejectattr('valid_to_current', 'none') | list | length > 0,
        'protects_columns': entries | selectattr('exclude_columns') | list | length > 0
            or entries | selectattr('hash_columns') | list | length > 0,
        'screens_schema_changes': entries | rejectattr('schema_changes', 'equalto', 'evolve') | list | length > 0,
        'holds_schema_changes': entries | selectattr('schema_changes', 'equalto', 'fail') | list | length > 0,
    }) }}
{% endmacro %}
