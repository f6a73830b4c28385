"""A replay as plain data: ``Trace``, what the renderers read of a run's replay. No torch here.

``stockdemo.replay.record`` makes one from any recorded run's replay (the Playground's, a
training step's, a learner's, a notebook's); the view's payload, the node table and the
handout read it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from stockdemo.graph import NodeCounts
from stockdemo.i18n import trn

PLAYGROUND_ROOT = "output.sum()"
TRAINING_ROOT = "loss (MSE)"


@dataclass(frozen=True)
class SourceLine:
    file: str  # path relative to the repo root when inside it, e.g. "stockdemo/model.py"
    line: int
    function: str  # e.g. "forward"
    text: str  # the source line, stripped
    indent: int = 0  # leading spaces the stripped text had (the code panel indents by it)


@dataclass(frozen=True)
class BackwardStep:
    node_id: str  # graph node id (op nodes; parameters appear via param_grad_norms)
    grad_norm: float  # 2-norm over all gradients flowing into the node together, as its prehook got them


@dataclass(frozen=True)
class Trace:
    root: str  # what backward ran from: "output.sum()" or "loss (MSE)"
    forward: tuple[str, ...]  # op node ids in creation order (grad_fn._sequence_nr())
    backward: tuple[BackwardStep, ...]  # the engine's real execution order
    param_grad_norms: dict[str, float]  # parameter node id -> ||param.grad||
    source: dict[str, SourceLine]  # op node id -> the forward line that created it
    saved: dict[str, tuple[int, int]]  # op node id -> (tensors saved for backward, bytes)
    second_backward_error: str  # the real RuntimeError text of a second backward() ("" if none)
    forward_code: tuple[SourceLine, ...]  # the forward code shown in the replay's code panel
    step_of_frame: tuple[int | None, ...]  # per forward entry: the loop's step t (None outside it)

    def to_dict(self) -> dict[str, object]:
        """Plain JSON-ready data (the command line prints it)."""
        return {
            "root": self.root,
            "forward": list(self.forward),
            "step_of_frame": list(self.step_of_frame),
            "backward": [{"node": s.node_id, "grad_norm": s.grad_norm} for s in self.backward],
            "param_grad_norms": self.param_grad_norms,
            "source": {k: asdict(v) for k, v in self.source.items()},
            "saved": {k: {"tensors": n, "bytes": b} for k, (n, b) in self.saved.items()},
            "second_backward_error": self.second_backward_error,
            "forward_code": [asdict(line) for line in self.forward_code],
        }


def replay_status(root: str, counts: NodeCounts, forward_total: int, backward_total: int
                  ) -> dict[str, object]:
    """What the replay's status line says, in the words every count uses (``NodeCounts``), in the
    language spoken now.

    ``forward``/``backward`` are templates: the browser puts the frame reached
    in place of ``{done}``. The totals are the frames it replays: one per
    operation, the only nodes ``forward`` records (parameter tensors, the
    input and the output exist before it runs).
    """
    done = "{done}"  # left for the browser to fill
    return {
        "forward": trn("Record (forward): {done} of {n} operation recorded",
                       "Record (forward): {done} of {n} operations recorded", forward_total, done=done),
        "forward_total": forward_total,
        "forward_end": trn("with {others}: the graph's {n} node", "with {others}: the graph's {n} nodes",
                           counts.nodes, others=counts.besides_operations()),
        "backward": trn("Backward of {root}: {done} of {n} operation run",
                        "Backward of {root}: {done} of {n} operations run", backward_total,
                        root=root, done=done),
        "backward_total": backward_total,
        "backward_end": trn("the {n} parameter tensor holds its .grad",
                            "the {n} parameter tensors hold their .grad", counts.parameters),
    }
