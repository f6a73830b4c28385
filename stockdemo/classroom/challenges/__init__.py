"""Challenges the teacher asks the class: a prompt, the code to start from, a check on the graph.

    from stockdemo.classroom.challenges import CHALLENGES, difference, shape_key
    challenge = CHALLENGES["detach"]
    run = lambda source: run_code(source, who=session)  # a check's own runs queue as the student's
    verdict = challenge.check.verdict(student_source, run, first=student_run)
    tile = shape_key(student_run.graph)         # the gallery's group
    ringed = difference(teacher_run.graph, student_run.graph).added_nodes

One challenge per ready-made edit of the "Your code" page (``stockdemo.code.edits.EDITS``),
under the edit's name, its check declared in the lessons' vocabulary of graph facts
(``stockdemo.lessons.checks``: the same tables a lesson file writes), and ``"prompt"``: the
teacher's own words, checked only for a run that draws a graph (``prompt_challenge``).

A verdict belongs to a run, not to a tile. A check that needs one run reads only what the
tile's key hashes, so one tile gets one verdict from it; checks about change run the code
again (another seed, longer sequences), and an ``if`` that took the same branch at the
first seed shares a tile with a run that did not: count the verdicts inside a tile.
"""

from __future__ import annotations

from stockdemo.code.edits import EDITS, apply, seed_source
from stockdemo.i18n import N_
from stockdemo.lessons.checks import Check, Runner, Verdict, parse_check
from stockdemo.lessons.shape import difference, matching, shape_key
from stockdemo.lessons.steps import Challenge

PROMPT = "prompt"
RUNS_AND_DRAWS = parse_check({"fact": "draws"})
GRAPH_GROWS = parse_check({"fact": "grows"})  # the seed's first claim: for a prompt or a lesson

# Edit name -> (what the student is asked to do, its check). The edit itself is the reference
# answer the teacher can show; the check accepts any code that builds the same kind of graph.
_ASKS: dict[str, tuple[str, dict]] = {
    "if": (N_("Make forward take a different path depending on the data: an `if` on a tensor's "
           "value."), {"fact": "changes_with_data", "what": "graph"}),
    "while": (N_("Let the data decide how many time steps run: a loop that stops on a tensor's "
              "value."), {"fact": "changes_with_data", "what": "steps"}),
    "skip": (N_("Add a skip connection: add the input to the RNN's output."),
             {"fact": "op", "op": "AddBackward0", "after": "recurrent", "data": True}),
    "detach": (N_("Write the loop over time steps yourself and detach the hidden state, so "
               "backward cannot reach the early steps."),
               {"all": [{"fact": "path", "step": -1}, {"not": {"fact": "path", "step": 0}}]}),
    "inplace": (N_("Write into part of a tensor in place, between the RNN and the output."),
                {"fact": "op", "op": "CopySlices"}),
    "print": (N_("Write the loop over time steps yourself, and print something at every step."),
              {"all": [{"fact": "one_step_at_a_time"}, {"fact": "prints_every_step"}]}),
    "loop": (N_("Replace nn.RNN with your own loop over the time steps (nn.RNNCell, one step at a "
             "time)."), {"all": [{"fact": "one_step_at_a_time"}, {"fact": "grows"}]}),
    "attention": (N_("Let every time step reach the prediction: weigh the RNN's outputs with a "
                  "softmax (attention)."), {"fact": "weighs_steps"}),
}


def prompt_challenge(prompt: str, title: str = N_("Your question"),
                     check: Check = RUNS_AND_DRAWS) -> Challenge:
    """A challenge in the teacher's own words: by default it passes any run that draws a
    graph; ``check`` may be any other (``GRAPH_GROWS``: the seed's first claim)."""
    return Challenge(PROMPT, title, prompt, seed_source(), None, check)


CHALLENGES: dict[str, Challenge] = {
    **{name: Challenge(name, EDITS[name].title, ask, seed_source(), apply(EDITS[name]),
                       parse_check(check, reference=apply(EDITS[name])))
       for name, (ask, check) in _ASKS.items()},
    PROMPT: prompt_challenge(N_("Change the model as the teacher asks, and run it.")),
}

__all__ = ["CHALLENGES", "GRAPH_GROWS", "PROMPT", "RUNS_AND_DRAWS", "Challenge", "Check", "Runner", "Verdict",
           "difference", "matching", "prompt_challenge", "shape_key"]
