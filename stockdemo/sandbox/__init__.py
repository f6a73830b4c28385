"""Learners' code, run for real and walled in by the kernel: the engine of the "Your code" page.

    from stockdemo.sandbox import run_code, SEED_CODE
    run = run_code(SEED_CODE)          # -> CodeRun; never raises
    run.ok, run.printed, run.shape, run.error, run.graph, run.ops_by_type, run.message

The code never runs in the server process. The server's fork server
(``stockdemo/forkserver/``), started once per server as a clean subprocess,
forks one child per run; the child walls itself in (rlimits, Landlock, a
seccomp allow-list) and runs the script. A module per idea:

- ``limits.py``: every limit, declared once, with words and the operator's variables;
- ``pool.py``: the server's side, ``run_code`` and the bounded queue;
- ``watch.py``: a run seen from the fork server: its fork, pipes and wall clock;
- ``child.py``: one run: exec, errors on the learner's lines, the graph record;
- ``kernel.py``: the walls (rlimits, Landlock, seccomp);
- ``attempts.py``: what the code tried that was refused, in words;
- ``protocol.py``: the JSON that crosses each pipe, checked, and ``CodeRun``;
- ``seed.py``: the editor's first code.
"""

from stockdemo.sandbox.limits import OFF_MESSAGE, Limits, code_enabled
from stockdemo.sandbox.pool import CodePool, run_code, shared_pool
from stockdemo.sandbox.protocol import CodeError, CodeRun
from stockdemo.sandbox.seed import SEED_CODE

__all__ = ["OFF_MESSAGE", "SEED_CODE", "CodeError", "CodePool", "CodeRun", "Limits", "code_enabled",
           "run_code", "shared_pool"]
