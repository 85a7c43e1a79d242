{% macro cdc_merge_on_read() %}
    {{ return({
        'format-version': '2',
        'write.merge.mode': 'merge-on-read',
        'write.update.mode': 'merge-on-read',
        'write.delete.mode': 'merge-on-read',
    }) }}
{% endmacro %}
