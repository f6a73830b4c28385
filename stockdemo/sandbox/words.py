"""The sentences the sandbox says to a learner, by id: made where no catalog is read, said in the server.

A run's child, the fork server's watcher and the pool's thread serve no one reader, and the
child reads no catalogs. So a message they make is an id of ``SAID`` and its values, beside its
English (the ``message`` the command line's JSON keeps): ``worded("killed")``. The server says
it in the reader's language when it is shown (``said``, through ``CodeRun.message``). Python's
and torch's own words are a value, kept as written.

What comes from a run's child is untrusted (the learner's code ran there): ``check_words``
takes only ids of ``SAID``, with exactly their placeholders, as short text or whole numbers.
"""

from __future__ import annotations

import string
from collections.abc import Iterable

from stockdemo.i18n import N_, tr
from stockdemo.sandbox import attempts

MAX_SENTENCES = 4  # ids in one message
MAX_VALUE = 2000  # characters of one value (Python's own message, say)

SAID: dict[str, str] = {
    "not set up": N_("The sandbox could not be set up here ({error}); your code was not run."),
    "no predictions": N_("name 'predictions' is not defined: the graph is drawn from the tensor your code "
                         "names `predictions`, as the seed's last line does (predictions = "
                         "model(input_data))."),
    "not a tensor": N_("predictions must be a Tensor, not {type}."),
    "not a tensor, no return": N_("predictions must be a Tensor, not {type} (does forward end with "
                                  "`return`?)."),
    "no grad": N_("predictions does not require grad and does not have a grad_fn: no parameter or tensor "
                  "with requires_grad=True took part in making it (was it made under torch.no_grad(), or "
                  "detached?), so autograd recorded no graph."),
    "recursion": N_("Stopped at Python's recursion limit ({calls} nested calls): {error}"),
    "syntax": N_("{error} (line {line}, column {column})"),
    "refused": N_("The sandbox refused to {attempt} ({call}): {error}"),
    "refused a call": N_("The sandbox refused a system call your code made: {error}"),
    "refused a thread": N_("The sandbox refused to start a thread: {error}"),
    "python's": "{error}",  # Python's own words, before a sentence of ours
    "files": N_("The sandbox has no files but its own: your code may write and read files in its own empty "
                "folder (open('notes.txt', 'w'), torch.save(model, 'model.pt')), gone when the run ends, "
                "and read the modules Python has installed; nothing else."),
    "no landlock": N_("Without Landlock on this server's kernel, only modules loaded before your code ran "
                      "can be imported, among them {loaded}."),
    "busy wait": N_("the server was busy with other pages, and your code waited {seconds} s of it for a "
                    "processor (pages go first). Try again in a moment."),
    "too much data": N_("The run sent back more data than any graph within the limits needs."),
    "unreadable": N_("The run ended (exit code {code}) without a result the server could read ({error})."),
    "killed": N_("The run was killed from outside (SIGKILL), most likely because the server ran short of "
                 "memory."),
    "sigsys": N_("The sandbox refused a system call of another architecture and ended the run (SIGSYS)."),
    "native crash": N_("Your code crashed Python in native code: {what} ({signal}). Through ctypes, say, or "
                       "a recursion deeper than the stack."),
    "bad result": N_("The sandbox sent back a bad result ({error})."),
    "restarted": N_("The sandbox's warm process ended (exit code {code}) while your code ran; it is "
                    "starting again: run your code again."),
    "restarted, killed": N_("The sandbox's warm process was killed, most likely because the server ran "
                            "short of memory (try a smaller run), while your code ran; it is starting "
                            "again: run your code again."),
    "cannot start": N_("The sandbox cannot start on this server: its process ended (exit code {code}) "
                       "before it was ready; the server's log says why."),
    "cannot start, killed": N_("The sandbox cannot start on this server: its process was killed, most "
                               "likely because the server ran short of memory (try a smaller run), before "
                               "it was ready; the server's log says why."),
    "shut down": N_("The sandbox was shut down."),
    "shutting down": N_("The sandbox is shutting down. Try again in a minute."),
    "full": N_("Every place in the sandbox is taken and {waiting} runs are already waiting. Try again in a "
               "minute."),
    "yours waiting": N_("Your previous runs are still waiting for the sandbox: this one was not sent. Press "
                        "Run again once they are back."),
    "busy": N_("The sandbox is busy: your run would wait about {seconds} s for a place. Try again in a "
               "minute."),
    "code length": N_("your code is {chars} characters long."),
    "too many": N_("Too many runs at once."),
    "no answer": N_("The sandbox did not answer in time; try again in a minute."),
    "settings": N_("The sandbox's settings on this server are not valid: {error}"),
}

Words = tuple[tuple[str, tuple[tuple[str, str | int], ...]], ...]  # (id, ((name, value), ...)), ...


def sentence(key: str, **values: str | int) -> tuple[str, tuple[tuple[str, str | int], ...]]:
    """One sentence of ``SAID``, with its values (text, cut to ``MAX_VALUE``, or whole numbers
    written per reader)."""
    return key, tuple((name, v[:MAX_VALUE] if isinstance(v, str) else v) for name, v in values.items())


def worded(*sentences: tuple[str, tuple[tuple[str, str | int], ...]]) -> dict:
    """A message's fields: ``message``, its English, and ``words``, what ``said`` says again."""
    english = " ".join(SAID[key].format(**{name: f"{v:,}" if isinstance(v, int) else v for name, v in values})
                       for key, values in sentences)  # 1,234 as English writes it, with no catalog read
    return {"message": english, "words": tuple(sentences)}


# Values that are words themselves (made in English where the run was): said here too.
SAID_VALUES = {"attempt": attempts.said, "what": tr}


def said(words: Words) -> str:
    """The sentences in the language spoken now (``SAID_VALUES`` said too)."""
    return " ".join(tr(SAID[key], **{name: SAID_VALUES.get(name, str)(v) if isinstance(v, str) else v
                                     for name, v in values})
                    for key, values in words)


def to_wire(words: Words | None) -> list | None:
    return None if words is None else [[key, dict(values)] for key, values in words]


def check_words(raw: object) -> Words | None:
    """``words`` from the wire, checked: known ids, their placeholders exactly. Raises ValueError."""
    if raw is None:
        return None
    if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_SENTENCES:
        raise ValueError("words: expected a list of 1 to 4 sentences")
    return tuple(_checked(item) for item in raw)


def _checked(item: object) -> tuple[str, tuple[tuple[str, str | int], ...]]:
    if not isinstance(item, list) or len(item) != 2 or item[0] not in SAID or not isinstance(item[1], dict):
        raise ValueError("words: expected [id, values] with a known id")
    key, values = item
    if set(values) != set(_names(SAID[key])):
        raise ValueError(f"words: {key} takes {', '.join(_names(SAID[key])) or 'no values'}")
    for value in values.values():
        if isinstance(value, bool) or not isinstance(value, str | int) or len(str(value)) > MAX_VALUE:
            raise ValueError("words: a value is short text or a whole number")
    return key, tuple(values.items())


def _names(template: str) -> Iterable[str]:
    return [name for _, name, _, _ in string.Formatter().parse(template) if name]
