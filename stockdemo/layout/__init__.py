"""Where each node goes: a recorded ``Graph`` laid out as a ``Picture`` (plain data, in points).

The Playground's model is laid out as time steps x layers (``steps``, its ``blocks``); any
other code by where it looped (``by_code``, its ``loops``). Both hand the writers in
``stockdemo.render`` the same ``Picture`` (``picture``).
"""
