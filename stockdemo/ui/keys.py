"""Every session-state key of ``stockdemo.ui``, declared once, with why it is kept.

A knob's widget is keyed by the knob's name (``stockdemo.config``), so those are
declared there. A widget whose key no code reads back (a button's) keeps its key
beside it. Class mode's own keys are in ``ui/classmode/keys.py``.
"""

from __future__ import annotations

# --- the page frame
PRESENTING = "present"  # presenter mode on: taken from the link once, then from the toggle
PRESENT_TOGGLE = "present_toggle"  # the sidebar's presenter toggle, read by its callback


# --- links: a link's values are checked once per session and page, and said once
def link_checked(page: str) -> str:
    """The messages the link of ``page`` (its file) gave; present once its values are taken."""
    return f"_url_checked:{page}"


NODE_CHECKED = "_url_checked:debugging_node"  # the Debugging link's node, checked against the run

# --- the stage (the Playground's graph view with its controls)
PLAYGROUND_LIVE = "playground_live"  # the Playground's stage fragment: a plug-in reruns it alone
STAGE_VALUE = "stage:{}"  # .format(knob name): a stage knob's value (a Train widget owns the bare name)
STAGE_REQ = "_stage_req"  # the browser's request number the session last took
STAGE_WRITTEN = "stage:url"  # what the stage last wrote to the URL, by knob name: a link's own differs
STAGE_REDRAWN = "stage:redrawn_at"  # when the watch found the stage missing and reran the page
STAGE_TOKEN = "stage:token"  # the secret naming this session's seat on the moves' socket (stage_route)
STAGE_DRAWN = "stage:drawn"  # (config, view) the stage drew last: what "Pin as A" pins, the panels show
PINNED = "stage:compare"  # run A's settings as the link carries them, or None: no comparison
PINNED_WRITTEN = "stage:compare_url"  # what compare mode last wrote to the URL: a link's own differs
COMPARE_MESSAGES = "_stage_compare_messages"  # what the link's run A gave to say, said on each run
REPLAY = "replay"  # the Playground's "Replay this run" toggle, on or off (its URL key too)

# --- the graph view and the panels
TRAINING_TRACE = "_graph_view_training_trace"  # (result, its first step replayed): made once per result
PANEL_SHOWN = "_panel_shown"  # the panel the picker last showed: a later link naming one wins
PREVIOUS_RUN = "playground_previous"  # the previous run with other settings: what changed since
STATIC_ON = "static_on"  # Capture was pressed once: the static captures run on each change of T
STATIC_SESSION = "static_session"  # this learner's torch.compile session (static.CompileSession)

# --- training (in a whole-page run, so Stop can interrupt it)
TRAIN_JOB = "train_job"  # (key, dataset, config) of the run Train asked for, until it ends
TRAIN_RESULT = "train_result"  # (key, TrainResult) the last run trained, shown while its key stands
TRAIN_PARTIAL = "train_partial"  # the epochs so far of the run training now
TRAIN_STOPPED = "train_stopped"  # the epochs a Stop left, shown once
TRAIN_PRESSED = "train_pressed"  # Train was just pressed: the fragment goes straight to the page run

# --- the Lab (the open experiment's name is LAB_TAB's key: stockdemo.config)
LAB_TABS = "lab_tabs"  # the experiments' tabs, titled in the reader's language, read by their callback
LAB_WRITTEN = "_lab_url"  # the experiment the Lab last wrote to the URL: a link's own differs

# --- the Lesson
LESSON_STEP = "lesson_step"  # the step on screen, kept when the link has none (back from the menu)
LESSON_REVEALED = "lesson_revealed"  # the steps whose answer this tab has revealed
LESSON_DIGEST = "lesson_digest"  # the lesson last shown: another one starts unrevealed, at step 1
LESSON_UPLOADED = "lesson_uploaded"  # a lesson file of the teacher's too long for a link, parsed
LESSON_PICKER = "lesson_picker"  # the picker of shipped lessons, read by its callback
LESSON_UPLOAD = "lesson_upload"  # the lesson file uploader, read by its callback
LESSON_REFUSED = "lesson_refused"  # why the last uploaded lesson file was refused, said under it
LESSON_TO_TEACH = "lesson_to_teach"  # a lesson the authoring page hands to the Class page's start

# --- Write a lesson (the authoring page)
AUTHOR_TEXT = "author:text"  # the lesson's text as last previewed (or opened)
AUTHOR_DOC = "author:doc"  # bumped when the editor must take a new text (a lesson opened)
AUTHOR_RAN = "author:ran"  # the number of the last Preview answered (the editor's run counter)
AUTHOR_PICK = "author:pick"  # the "start from a lesson of ours" pills, read by their callback
AUTHOR_UPLOAD = "author:upload"  # the lesson file uploader, read by its callback

# --- Your code (the editor's page)
CODE_TEXT = "code:text"  # the code the editor shows: the last run's, an edit's, or the seed
CODE_DOC = "code:doc"  # the editor's text's version: the browser replaces its text only when it changes
CODE_BASE = "code:base"  # the text an edit is shown as a diff against (the seed), or None
CODE_LESSON = "code:lesson"  # what the ready-made edit on screen teaches, in one line
CODE_RAN = "code:ran"  # (the number of the learner's last Run, the code it ran)
CODE_TAKEN = "code:taken"  # the link's (or the teacher's) code last taken into the editor
CODE_PREVIOUS = "code:previous"  # the previous run's node ids, hashed: what this run added is ringed
CODE_UNROLL = "code:unroll"  # (the code, its folds drawn unrolled, the folds a click may unroll)
CODE_EDIT = "code_edit"  # the ready-made edits' picker
CODE_FILM_OF = "code:film_of"  # the code the film's stepper belongs to: new code shows its last graph
CODE_FRAME = "code:frame"  # the film's graph the page drew last (an index into CodeRun.film)
CODE_TOKEN = "code:token"  # the secret naming this session's seat on the code's socket (code_route)

# --- the language (stockdemo/ui/language.py)
LANGUAGE = "language"  # this session's language: the link's, else the browser's, then the picker's
LANGUAGE_LINK = "_language_link"  # the link's ?lang= last taken: a new one (a link followed) wins
LANGUAGE_MESSAGE = "_language_message"  # why the link's ?lang= was not taken, said once
LANGUAGE_PICKER = "language_picker"  # the sidebar's language menu, read by its callback
FRAME_WIDGETS = (PRESENT_TOGGLE, LANGUAGE_PICKER)  # the sidebar's own widgets, on every page
