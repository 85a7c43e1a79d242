{{ typed_current('shop', 'orders') }}
