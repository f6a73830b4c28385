"""What a class writes for the ``.detach()`` challenge: one program per student, each text its own.

    programs = detach_programs(start, 60)   # start: the code the students' editors open on
    programs[i].source, programs[i].passes  # the text student i runs, the check's verdict on it

Each program is ``start`` (the hand-written loop: ``EDITS["loop"]``) with the detach put in
one of four places, two that pass the check and two that do not, and a seed of its own
(``torch.manual_seed(100 + i)``: the same graph, another text), so no two students'
programs, nor the teacher's, are the same text and no cache answers one for another.
"""

from __future__ import annotations

from dataclasses import dataclass

STEP = "h = self.cell(x[:, t], h)"
SEED = "torch.manual_seed(0)"
# (the step's line, or lines, as the student writes it; whether the check passes it)
PLACEMENTS: tuple[tuple[str, bool], ...] = (
    ("h = self.cell(x[:, t], h.detach())", True),  # in the cell's call
    ("h = h.detach()\n{indent}h = self.cell(x[:, t], h)", True),  # on a line of its own, before
    ("h = self.cell(x[:, t].detach(), h)", False),  # the input detached, not the state
    (STEP, False),  # not done yet
)


@dataclass(frozen=True)
class Program:
    source: str
    passes: bool  # what CHALLENGES["detach"].check says of it


def detach_programs(start: str, count: int) -> list[Program]:
    """``count`` students' programs from ``start``; ValueError if ``start`` is not the loop
    with the seed's ``torch.manual_seed(0)``."""
    lines = start.splitlines(keepends=True)
    steps = [i for i, line in enumerate(lines) if line.strip() == STEP]
    if len(steps) != 1 or start.count(SEED) != 1:
        raise ValueError(f"the start code needs one {STEP!r} line and one {SEED!r}")
    at = steps[0]
    indent = lines[at][:len(lines[at]) - len(lines[at].lstrip())]
    out = []
    for i in range(count):
        step, passes = PLACEMENTS[i % len(PLACEMENTS)]
        body = [*lines[:at], indent + step.format(indent=indent) + "\n", *lines[at + 1:]]
        out.append(Program("".join(body).replace(SEED, f"torch.manual_seed({100 + i})"), passes))
    return out
