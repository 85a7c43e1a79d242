{% macro first_undecodable_column(sent_before, sent_after, decoded_before, decoded_after) %}
    element_at(filter(
        concat(map_keys(coalesce({{ sent_before }}, map())), map_keys(coalesce({{ sent_after }}, map()))),
        uc_k -> ({{ sent_before }}[uc_k] is not null and {{ decoded_before }}[uc_k] is null)
        or ({{ sent_after }}[uc_k] is not null and {{ decoded_after }}[uc_k] is null)
    ), 1)
{%- endmacro %}
