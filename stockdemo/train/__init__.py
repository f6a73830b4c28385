"""Training a fresh model on prices, live: the prices and their windows (``prices``,
``windows``), the training loop (``training``), one training step's graph and its replay
(``step``), and the workers that run it off the server's process (``pool`` in the server,
``worker`` in the forked process).
"""
