"""Class mode's session-state keys, each declared once, with why it is kept (``ui/keys.py`` has
the rest). Class state itself lives in ``stockdemo.classroom`` (memory or Redis), never here."""

from __future__ import annotations

# --- who this tab is in a class
TEACHER = "class_teacher"  # the teacher's Teacher (code and secret key): this tab runs a class
CODE = "class_code"  # the class this tab is in as a student
SEAT = "class_seat"  # this tab's seat token: its answers are its own across reloads
FOLLOWING = "class_following"  # the student follows the teacher's page (else explores alone)
JOIN_MESSAGE = "class_join_message"  # a join's refusal, shown once where it was asked
LESSON_OF = "class_lesson_of"  # (class, its lesson's digest): a class's lesson never changes
LINK_TRIED = "_class_link_tried"  # the join link already tried in this session: tried once

# --- following the teacher
APPLIED = "class_applied"  # (version, page, params) a following student last took
APPLIED_AT = "class_applied_at"  # when (time.monotonic()): a browser's stale value is no move
PUBLISHED = "class_published"  # (page, params) the teacher last sent: sent again only when changed
HERE = "class_page"  # the page this tab's last run was on
ARRIVED_AT = "class_arrived_at"  # when (time.monotonic()) this tab last arrived on another page
STATE = "class_state"  # (time.monotonic(), ClassState) of the last poll: what the bar last saw
FULL_RUN = "_class_full_run"  # set outside the bar's fragment: this run is a whole-page run
TOGGLED = "_class_toggled"  # Break away or Follow was just pressed: the page reruns whole
SHOWN = "_class_shown_query"  # the address of the page on screen, as its whole-page run began

# --- what the tab last drew, all of it (a run stopped half-way must be asked for again)
DRAWN = "class_drawn"  # the Playground settings this tab last drew
DRAWN_PAGE = "class_drawn_page"  # (page, params) another page last drew from the teacher
DRAWN_PAGE_AT = "class_drawn_page_at"  # when (time.monotonic()) a whole run last drew DRAWN_PAGE
DRAWN_AT = "class_drawn_at"  # when (time.monotonic()) the Playground or the Lesson last drew it all
SENT_GRAPH = "class_sent_graph"  # the picture a following tab's stage was last sent (its key)
BOX = "class_box"  # what the Lesson's answer box shows in this run
DRAWN_BOX = "class_drawn_box"  # what the Lesson's answer box last showed, all of it

# --- a challenge on the Your code page (classmode/challenge.py, classmode/gallery.py)
CHALLENGE_TAKEN = "class_challenge_taken"  # (class, challenge) whose starting code this tab took: once
SHOWN_TAKEN = "class_shown_taken"  # the class's ``shown`` this tab last drew: a new one reruns the page
SUBMITTED = "class_submitted"  # (class, challenge, Run number, code) last sent: each Run goes once
VERDICT = "class_verdict"  # (class, challenge, Verdict) of this tab's last run: said over its editor
ASK_CHOICE = "class_ask_choice"  # the teacher's pick in "Ask the class": a ready-made edit, or own words
ASK_PROMPT = "class_ask_prompt"  # the teacher's own words for a challenge
GALLERY_DRAWN = "class_gallery_drawn"  # (challenge, shown, looked) the teacher's page last drew whole
LOOKED = "class_looked"  # (challenge, shape) the tile the teacher looks at beside their own run, alone

# --- the teacher's tab keeps its key (classmode/keeper.py)
KEPT = "class_kept"  # what this session told its tab to keep: "code:key", or "" once forgotten
ASKED = "_class_keeper_asked"  # the tab was asked once for a key it kept
KEEPER_ASK = "class_keeper_ask"  # the keeper component that asks: its answer comes back here
CONSOLE_MESSAGE = "class_console_message"  # a refusal met by a button's callback, shown once

# --- the lesson a class is started with (classmode/start.py)
START_LESSON = "class_start_lesson"  # the picker: a shipped lesson's name, or "own"
OWN_LESSON = "class_own_lesson"  # the teacher's own lesson, parsed (a file, a link, the authoring page)
OWN_REFUSED = "class_own_refused"  # why the teacher's last lesson file or link was refused


def answer_key(code: str, step: int) -> str:
    """This seat's answer to ``step`` in class ``code``, as sent (kept if the server is down)."""
    return f"class_answer:{code}:{step}"


def pending_key(code: str, step: int) -> str:
    """The answer to ``step`` is kept here, not yet sent (the class server did not answer)."""
    return f"class_pending:{code}:{step}"


def countdown_key(step: int) -> str:
    """The teacher's countdown picked for ``step``, read by Open answers' callback."""
    return f"class_countdown_{step}"
