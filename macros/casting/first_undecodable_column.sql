{% macro first_undecodable_column(sent_before, sent_after, decoded_before, decoded_after) %}
    {#- Name of the first column whose value was sent (not null) but decoded to null, in either
        image; null when every value decoded. The base models reject such a message. -#}
    element_at(filter(
        concat(map_keys(coalesce({{ sent_before }}, map())), map_keys(coalesce({{ sent_after }}, map()))),
        uc_k -> ({{ sent_before }}[uc_k] is not null and {{ decoded_before }}[uc_k] is null)
        or ({{ sent_after }}[uc_k] is not null and {{ decoded_after }}[uc_k] is null)
    ), 1)
{%- endmacro %}
