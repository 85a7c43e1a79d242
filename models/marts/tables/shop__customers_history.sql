{{ typed_history('shop', 'customers') }}
