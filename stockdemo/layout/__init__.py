"""Where each node goes: a recorded ``Graph`` laid out as a ``Picture`` (plain data, in points).

A graph tagged with steps and layers (the Playground's model) is laid out as time steps x
layers (``steps``, its ``blocks``); any other by where its code looped (``by_code``, its
``loops``); ``views`` is the one place that chooses. Both hand the writers in
``stockdemo.render`` the same ``Picture`` (``picture``).
"""
