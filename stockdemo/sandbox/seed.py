"""The code the "Your code" editor starts with: the seed's StockPredictor and the lines that run it.

It is the Playground's code for the seed run (``stockdemo.live.reproduce``): model.py's own
class, not a copy in a string, then the lines that build the input and run it. A script as a
learner would write it (``python seed.py`` runs it); the sandbox draws the graph of the
tensor it names ``predictions``.
"""

from stockdemo.config import RunConfig
from stockdemo.live.reproduce import reproduce_code

SEED_CODE = reproduce_code(RunConfig())
