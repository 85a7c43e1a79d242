{{ typed_current('shop', 'customers') }}
