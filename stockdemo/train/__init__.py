"""Training a fresh model on prices, live: the prices and their windows (``prices``,
``windows``), the training loop (``training``), and the workers that run it off the
server's process (``pool`` in the server, ``worker`` in the forked process).
"""
