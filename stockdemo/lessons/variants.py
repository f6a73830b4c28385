"""The student's code, run again under other conditions, for checks about change.

Each variant puts lines *before* the student's code and changes none of it, so it works
whatever the student wrote, wherever they wrote it. Lines of the variant's runs are one
or more further down: checks read structure, never line numbers.

- ``with_seed(source, k)``: other random numbers, so other data and other weights.
  ``torch.manual_seed`` is seeded with ``k`` first, and a seed the code sets itself is
  shifted by ``k`` (the seed's own ``torch.manual_seed(0)`` would otherwise undo it).
- ``with_longer_sequences(source)``: every 3-d tensor drawn by ``torch.randn`` or
  ``torch.rand`` has twice its time steps (the middle dimension: batch, steps, features).
- ``counting_prints(source)``: every call of ``print`` first writes ``PRINT_MARK``, so
  the run's printed text says how many times ``print`` ran (``print_calls``).
"""

from __future__ import annotations

PRINT_MARK = "\x1e"  # the record separator: no learner prints it by chance

_SEED = ("import torch as __challenge_torch\n"
         "__challenge_seed = __challenge_torch.manual_seed\n"
         "__challenge_torch.manual_seed = lambda seed, __k={k}: __challenge_seed(seed + 1000003 * __k)\n"
         "__challenge_seed({k})\n")

_LONGER = '''\
import torch as __challenge_torch
def __challenge_longer(draw):
    def drawn(*size, **options):
        dims = list(size[0]) if len(size) == 1 and not isinstance(size[0], int) else list(size)
        if len(dims) == 3:
            dims[1] *= 2
        return draw(*dims, **options)
    return drawn
__challenge_torch.randn = __challenge_longer(__challenge_torch.randn)
__challenge_torch.rand = __challenge_longer(__challenge_torch.rand)
'''

_PRINTS = ("def print(*args, __print=print, **options):\n"
           f"    __print({PRINT_MARK!r}, end='')\n"
           "    return __print(*args, **options)\n")


def with_seed(source: str, k: int) -> str:
    """``source`` run with random numbers of seed ``k`` (k=0 is the code as written)."""
    return source if k == 0 else _SEED.format(k=k) + source


def with_longer_sequences(source: str) -> str:
    """``source`` with every 3-d ``torch.randn``/``torch.rand`` tensor twice as long in time."""
    return _LONGER + source


def counting_prints(source: str) -> str:
    """``source`` with each ``print`` call marked in the printed text (``print_calls``)."""
    return _PRINTS + source


def print_calls(printed: str) -> int:
    """How many times ``print`` ran, in the printed text of a ``counting_prints`` run."""
    return printed.count(PRINT_MARK)
