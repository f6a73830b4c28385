"""Where the script's data entered a recorded graph, and which of its time steps.

"The data" is a tensor of the script's own that needs no gradient (its ``x``), a view of it
(``x[:, t]``, ``x.detach()``), or what torch computed from it alone, outside autograd
(``x.mean(2)``, ``x.flip(1)``, ``x.float()``). A Python number (``out + 1.0``), a tensor made
from nothing but constants, or a hidden state computed with the model's weights is not.
``DataNotes`` watches the torch calls ``LineRecorder`` sees; ``inputs_of`` writes the
record's ``inputs`` (``recorder.raw_graph``)::

    {"name": "input_data", "shape": [10, 5, 3], "to": [7, 17], "steps": [[[0, 0]], [[1, 1]]]}

``to``: for each call that took the data, the node where it entered (the call's first node
with an empty input slot, else its first node). ``steps`` (data of three dimensions or more,
read as (batch, steps, features)): for each node of ``to``, the time steps it took, as
inclusive ranges.

Storages are told apart by address, so a freed tensor's address taken by another is no
longer the first one's: a derived tensor is remembered with a weak reference to its
storage (``StorageWeakRef``), and forgotten once that storage is freed.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Mapping

import torch
from torch.multiprocessing.reductions import StorageWeakRef

MAX_INPUTS = 8  # data tensors drawn at the most: a script's x and y, not every constant
MAX_NOTES = 200_000  # calls noted for data at the most: a long loop is still bounded
MAX_DERIVED = 4096  # tensors computed from data, remembered at once
MAX_SOURCES = 64  # views one derived tensor is remembered by; past it, the whole of each data
MAX_STEP_MAP = 4_000_000  # elements of a storage whose time steps are worked out

Geometry = tuple[int, tuple[int, ...], tuple[int, ...], int] | None  # offset, size, stride, itemsize
Source = tuple[int, Geometry]  # a data storage's address, and the view of it taken (None: all)

# Calls that read only a tensor's shape, dtype or device, never its values.
_FACTORIES = frozenset(getattr(torch.Tensor, n, None) for n in (
    "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor")) | frozenset(
    getattr(torch, n) for n in ("zeros_like", "ones_like", "empty_like", "full_like", "rand_like",
                                "randn_like", "randint_like"))


def storage_of(t: torch.Tensor) -> int:
    """Where a dense tensor's memory starts (0 for a tensor without one: sparse, meta, empty)."""
    try:
        return t.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return 0


def _geometry(t: torch.Tensor) -> Geometry:
    try:
        return t.storage_offset(), tuple(t.shape), tuple(t.stride()), t.element_size()
    except (RuntimeError, NotImplementedError):
        return None


def _tensors(args: tuple, kwargs: dict | None) -> Iterator[object]:
    for value in (*args, *(kwargs or {}).values()):
        yield from value if isinstance(value, (tuple, list)) else (value,)


class DataNotes:
    """The data each recorded call took, by storage, and the tensors computed from data."""

    def __init__(self) -> None:
        self._calls: dict[int, list[tuple[int, Geometry, bool]]] = {}  # storage -> (call, view, direct)
        self._derived: dict[int, tuple[StorageWeakRef, frozenset[Source]]] = {}
        self._noted = 0

    def _sources(self, storage: int, t: torch.Tensor) -> frozenset[Source] | None:
        """The data a derived tensor was computed from, or None if ``t`` is no derived one."""
        entry = self._derived.get(storage)
        if entry is None:
            return None
        if entry[0].expired():  # freed: its address now belongs to another tensor
            del self._derived[storage]
            return None
        return entry[1]

    def took(self, args: tuple, kwargs: dict | None, call: int) -> None:
        """A call that made nodes took ``args``: note each tensor that needs no gradient, and
        the data behind each derived one (a view of ``x`` is ``x`` entering the graph too)."""
        for t in _tensors(args, kwargs):
            if type(t) is not torch.Tensor or t.requires_grad or self._noted >= MAX_NOTES:
                continue
            storage = storage_of(t)
            if not storage:
                continue
            self._note(storage, call, _geometry(t), True)
            for source, view in self._sources(storage, t) or ():
                self._note(source, call, view, False)

    def _note(self, storage: int, call: int, view: Geometry, direct: bool) -> None:
        calls = self._calls.setdefault(storage, [])
        if not calls or calls[-1] != (call, view, direct):
            calls.append((call, view, direct))
            self._noted += 1

    def computed(self, func: object, args: tuple, kwargs: dict | None, out: object) -> None:
        """A call that made no node: if it read data and nothing that needs a gradient, what it
        returned is data too."""
        made = [t for t in (out if isinstance(out, (tuple, list)) else (out,))
                if type(t) is torch.Tensor and not t.requires_grad]
        if not made or func in _FACTORIES or len(self._derived) >= MAX_DERIVED and not self._forget_freed():
            return  # most such calls return no tensor: a size, a number, a string
        sources: set[Source] = set()
        taken: set[int] = set()
        for t in _tensors(args, kwargs):
            if isinstance(t, torch.Tensor) and t.requires_grad:
                return  # the weights took part: a hidden state, not data
            if type(t) is torch.Tensor and (storage := storage_of(t)):
                taken.add(storage)
                sources |= self._sources(storage, t) or {(storage, _geometry(t))}
        if not sources:
            return
        if len(sources) > MAX_SOURCES:
            sources = {(storage, None) for storage, _ in sources}
        for t in made:
            storage = storage_of(t)
            if storage and storage not in taken:
                self._derived[storage] = (StorageWeakRef(t.untyped_storage()), frozenset(sources))

    def _forget_freed(self) -> bool:
        """Drop the derived tensors already freed -> whether there is room again."""
        for storage in [s for s, (ref, _) in self._derived.items() if ref.expired()]:
            del self._derived[storage]
        return len(self._derived) < MAX_DERIVED

    def calls_of(self, t: torch.Tensor, direct: bool) -> list[tuple[int, Geometry]]:
        """The recorded calls that took ``t`` itself (``direct``) or data computed from it."""
        return [(call, view) for call, view, d in self._calls.get(storage_of(t), ()) if d == direct]


def _step_map(t: torch.Tensor) -> torch.Tensor | None:
    """For each element of ``t``'s storage, the time step (``t``'s dimension 1) it belongs to,
    -1 where ``t`` has none; None when ``t`` has no time axis or is too big to map."""
    if t.dim() < 3:
        return None
    try:
        size = t.untyped_storage().nbytes() // t.element_size()
        if size > MAX_STEP_MAP:
            return None
        steps = torch.full((size,), -1, dtype=torch.int64)
        index = torch.arange(t.shape[1]).view(1, -1, *([1] * (t.dim() - 2))).expand(t.shape)
        torch.as_strided(steps, t.shape, t.stride(), t.storage_offset()).copy_(index)
        return steps
    except (RuntimeError, NotImplementedError):
        return None


def _steps_in(steps: torch.Tensor, t: torch.Tensor, view: Geometry) -> set[int]:
    """The time steps of ``t`` a view of its storage covers (all of them if it cannot tell)."""
    everything = set(range(t.shape[1]))
    if view is None or view[3] != t.element_size():
        return everything
    offset, size, stride, _ = view
    try:
        found = torch.as_strided(steps, size, stride, offset).unique().tolist()
    except RuntimeError:
        return everything
    return {s for s in found if s >= 0}


def ranges(steps: set[int]) -> list[list[int]]:
    """{0, 1, 2, 4} -> [[0, 2], [4, 4]]."""
    out: list[list[int]] = []
    for s in sorted(steps):
        if out and out[-1][1] == s - 1:
            out[-1][1] = s
        else:
            out.append([s, s])
    return out


def inputs_of(order: list, nodes: list[dict], named: Mapping[str, object], notes: DataNotes,
              ends: list[int]) -> list[dict]:
    """The record's ``inputs``: where each named data tensor entered the graph (module docstring).

    A call that took a named tensor itself is that tensor's; a call that took only what was
    computed from data is the data's it was computed from."""
    by_seq = {n["seq"]: i for i, n in enumerate(nodes) if n["seq"] is not None}
    seqs = sorted(by_seq)

    def entry(call: int) -> int | None:
        first, last = (ends[call - 1] + 1 if call else 0), ends[call]
        made = [by_seq[q] for q in seqs[bisect_left(seqs, first):bisect_left(seqs, last + 1)]]
        if not made:
            return None
        return next((i for i in made if any(f is None for f, _ in order[i].next_functions)), made[0])

    data = [(name, t) for name, t in named.items() if type(t) is torch.Tensor and not t.requires_grad]
    direct = {call for _, t in data for call, _ in notes.calls_of(t, True)}
    found = []
    for name, t in data:
        taken: dict[int, set[int]] = {}
        steps = _step_map(t)
        for call, view in [*notes.calls_of(t, True),
                           *[(c, v) for c, v in notes.calls_of(t, False) if c not in direct]]:
            node = entry(call)
            if node is not None:
                taken.setdefault(node, set()).update(() if steps is None else _steps_in(steps, t, view))
        if taken:
            to = sorted(taken)
            item = {"name": name, "shape": list(t.shape), "to": to}
            if steps is not None:
                item["steps"] = [ranges(taken[i]) for i in to]
            found.append(item)
            if len(found) == MAX_INPUTS:
                break
    return found
