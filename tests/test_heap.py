"""The collector of a server process (stockdemo/heap.py): tuned on importing the ui, cycles still freed."""

import subprocess
import sys
import textwrap

from harness.helpers import ROOT


def _fresh(code: str) -> str:
    """Run ``code`` in a fresh interpreter (this one's collector is shared by every test)."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_importing_the_ui_freezes_the_imports_and_raises_the_young_threshold():
    out = _fresh("""
        import gc
        before = gc.get_threshold()
        import stockdemo.ui
        from stockdemo import heap
        print(before[0], gc.get_threshold()[0] == heap.YOUNG_THRESHOLD, gc.get_freeze_count() > 100_000)
    """)
    assert out == "700 True True"


def test_cycles_made_after_tuning_are_still_collected():
    out = _fresh("""
        import gc, weakref
        from stockdemo import heap
        heap.tune_for_serving()
        heap.tune_for_serving()  # twice is harmless

        class Node:
            pass

        freed = []
        for _ in range(3):
            a, b = Node(), Node()
            a.other, b.other = b, a  # a cycle: only the collector frees it
            weakref.finalize(a, freed.append, 1)
            del a, b
        gc.collect()
        print(len(freed), gc.get_threshold()[0] == heap.YOUNG_THRESHOLD)
    """)
    assert out == "3 True"
