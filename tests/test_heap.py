"""The collector and the C allocator of a server process (stockdemo/heap.py): tuned on importing the ui."""

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


def test_after_tune_malloc_megabyte_blocks_get_their_own_mapping_even_after_a_larger_one_was_freed():
    out = _fresh("""
        import ctypes
        from stockdemo import heap

        libc = ctypes.CDLL(None)
        libc.malloc.restype = ctypes.c_void_p

        class Info(ctypes.Structure):
            _fields_ = [(name, ctypes.c_size_t) for name in (  # glibc's struct mallinfo2
                "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                "keepcost")]

        libc.mallinfo2.restype = Info

        def mapped_of_twenty_megabytes() -> int:
            libc.free(ctypes.c_void_p(libc.malloc(8 << 20)))  # glibc raises its threshold past 8 MB
            before = libc.mallinfo2().hblks
            blocks = [libc.malloc(1 << 20) for _ in range(20)]
            mapped = libc.mallinfo2().hblks - before
            for b in blocks:
                libc.free(ctypes.c_void_p(b))
            return mapped

        untuned = mapped_of_twenty_megabytes()
        print(untuned, heap.tune_malloc(), mapped_of_twenty_megabytes())
    """)
    assert out == "0 True 20"


def test_no_collection_runs_while_paused_and_the_collector_is_as_it_was_after_even_after_an_error():
    out = _fresh("""
        import gc
        from stockdemo.heap import collector_paused
        passes = []
        gc.callbacks.append(lambda phase, info: phase == "start" and passes.append(info))
        gc.set_threshold(10)
        try:
            with collector_paused():
                before = len(passes)
                kept = [[] for _ in range(10_000)]
                during = len(passes) - before
                raise ValueError
        except ValueError:
            pass
        kept = [[] for _ in range(100)]
        print(len(passes) > before, end=" ")
        gc.disable()
        with collector_paused():
            pass
        print(during, gc.isenabled())
        gc.enable()
        with collector_paused():
            pass
        print(gc.isenabled())
    """)
    assert out.split() == ["True", "0", "False", "True"]  # collections after, none during
