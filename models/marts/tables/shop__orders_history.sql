{{ typed_history('shop', 'orders') }}
