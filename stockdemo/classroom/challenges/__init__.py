"""Challenges the teacher asks the class: a prompt, the seed to start from, a check on the graph.

    from stockdemo.classroom.challenges import CHALLENGES, difference, shape_key
    challenge = CHALLENGES["detach"]
    run = lambda source: run_code(source, who=session)  # a check's own runs queue as the student's
    verdict = challenge.check.verdict(student_source, run, first=student_run)
    tile = shape_key(student_run.graph)         # the gallery's group
    ringed = difference(teacher_run.graph, student_run.graph).added_nodes

A verdict belongs to a run, not to a tile: checks about change run the code again, and
loops are not part of the key, so one tile can hold runs that pass and runs that fail
(an ``if`` that took the same branch at the first seed; one cell step with or without a
loop around it). Count the verdicts inside a tile.

One challenge per ready-made edit of the "Your code" page (``stockdemo.code.edits.EDITS``),
under the edit's name, and ``"prompt"``: the teacher's own words, checked only for a run
that draws a graph (``prompt_challenge`` makes one with the teacher's text).

A module per idea:

- ``checks``: ``Check`` (a sentence and a predicate over a run's graphs) and ``Verdict``;
  one check per lesson;
- ``variants``: the code run again with other random numbers, longer sequences, or its
  prints counted, for checks about change;
- ``shape``: ``shape_key``, the structure of a graph as one key; ``difference`` against
  the teacher's reference and ``matching`` (which node is which), both by structure.
"""

from __future__ import annotations

from dataclasses import dataclass

from stockdemo.classroom.challenges.checks import (
    CHANGES_WITH_DATA,
    COPY_SLICES,
    CUT_AFTER_FIRST_STEP,
    GRAPH_GROWS,
    GROWS_WITH_STEPS,
    PRINTS_EVERY_STEP,
    RUNS_AND_DRAWS,
    SKIP_ADD,
    SOFTMAX_OVER_STEPS,
    STEPS_FOLLOW_DATA,
    Check,
    Runner,
    Verdict,
)
from stockdemo.classroom.challenges.shape import difference, matching, shape_key
from stockdemo.code.edits import EDITS, seed_source

PROMPT = "prompt"


@dataclass(frozen=True)
class Challenge:
    """What the teacher asks: the prompt above every student's editor, the code it opens
    with, and the check each student's run gets."""

    id: str  # an edit's name ("detach"), or "prompt"
    title: str  # short, for the teacher's picker
    prompt: str  # what a student reads above the editor
    start: str  # the code the editor opens with: the seed's
    check: Check


# Edit name -> (what the student is asked to do, its check). The edit itself is the answer
# the teacher can show; the check accepts any code that builds the same kind of graph.
_ASKS: dict[str, tuple[str, Check]] = {
    "if": ("Make forward take a different path depending on the data: an `if` on a tensor's "
           "value.", CHANGES_WITH_DATA),
    "while": ("Let the data decide how many time steps run: a loop that stops on a tensor's "
              "value.", STEPS_FOLLOW_DATA),
    "skip": ("Add a skip connection: add the input to the RNN's output.", SKIP_ADD),
    "detach": ("Write the loop over time steps yourself and detach the hidden state, so "
               "backward cannot reach the early steps.", CUT_AFTER_FIRST_STEP),
    "inplace": ("Write into part of a tensor in place, between the RNN and the output.",
                COPY_SLICES),
    "print": ("Write the loop over time steps yourself, and print something at every step.",
              PRINTS_EVERY_STEP),
    "loop": ("Replace nn.RNN with your own loop over the time steps (nn.RNNCell, one step at a "
             "time).", GROWS_WITH_STEPS),
    "attention": ("Let every time step reach the prediction: weigh the RNN's outputs with a "
                  "softmax (attention).", SOFTMAX_OVER_STEPS),
}


def prompt_challenge(prompt: str, title: str = "Your question", check: Check = RUNS_AND_DRAWS) -> Challenge:
    """A challenge in the teacher's own words: by default it passes any run that draws a
    graph; ``check`` may be any other (``GRAPH_GROWS``: the seed's first claim)."""
    return Challenge(PROMPT, title, prompt, seed_source(), check)


CHALLENGES: dict[str, Challenge] = {
    **{name: Challenge(name, EDITS[name].title, ask, seed_source(), check)
       for name, (ask, check) in _ASKS.items()},
    PROMPT: prompt_challenge("Change the model as the teacher asks, and run it."),
}

__all__ = ["CHALLENGES", "GRAPH_GROWS", "PROMPT", "Challenge", "Check", "Runner", "Verdict", "difference",
           "matching", "prompt_challenge", "shape_key"]
