"""The learner's code in the reader's language: what the sandbox says of a real run (its limits,
what it refused, the graphs its backward() calls built), made in English where the run was and
said in the server in Chinese and Spanish; the ready-made edits and a link's messages too.
Python's and torch's own words stay as they are."""

from __future__ import annotations

import pytest

from stockdemo.code.edits import EDITS
from stockdemo.code.link import MAX_LINK_CHARS, code_from_link
from stockdemo.i18n import catalog, number, speaking, tr
from stockdemo.sandbox import Limits, run_code
from stockdemo.sandbox.attempts import said
from stockdemo.sandbox.limits import OFF_MESSAGE, SPECS
from stockdemo.sandbox.protocol import BadResult, check_error

# More autograd nodes than a run may record (at the lowest bound, 100): stopped in the run's own
# process, in English.
LONG = "import torch\ny = torch.ones(3, requires_grad=True)\nfor _ in range(500):\n    y = y * 1.0\n"
SHELL = "import os\nos.system('ls')\nimport torch\npredictions = torch.ones(2, requires_grad=True) * 2\n"
THREE_BACKWARDS = ("import torch\nw = torch.ones(2, requires_grad=True)\nfor _ in range(3):\n"
                   "    (w * 2).sum().backward()\npredictions = w * 3\n")


def test_a_run_stopped_at_the_graph_limit_reads_in_each_language_and_its_record_stays_english():
    run = run_code(LONG, Limits(graph_nodes=100))
    assert run.error.limit == "graph_nodes"
    english = run.error.message
    assert english == run.limits.stopped("graph_nodes", "your code recorded more autograd nodes than that.")
    with speaking("zh_CN"):
        assert run.message == ("到达图的大小上限（autograd 图中的 100 个节点），已停止："
                               "你的代码记录的 autograd 节点超过了这个数。")
    with speaking("es"):
        assert run.message == ("Detenido en el límite de tamaño del grafo (100 nodos en el grafo de "
                               "autograd): tu código registró más nodos de autograd que eso.")
    assert run.error.message == english and run.to_dict()["message"] == english  # the command line's JSON


def test_python_s_own_words_after_a_limit_stay_as_python_wrote_them():
    limits = Limits()
    english = limits.stopped("memory_mb", "MemoryError: cannot allocate")
    with speaking("es"):
        said_here = limits.said("memory_mb", english)
    assert said_here.startswith("Detenido en el límite de memoria (256 MB de memoria")
    assert said_here.endswith(": MemoryError: cannot allocate")
    assert limits.said("memory_mb", "something else") == "something else"


def test_what_the_sandbox_refused_is_said_in_the_readers_words_and_the_call_as_the_code_made_it():
    run = run_code(SHELL)
    assert run.ok and run.refused and run.refused[0].startswith("run a shell command (os.system(")
    call = run.refused[0].removeprefix("run a shell command")
    with speaking("zh_CN"):
        assert run.message == f"沙盒拒绝让你的代码运行 shell 命令{call}。"
    with speaking("es"):
        assert run.message == f"El sandbox se negó a ejecutar una orden de shell{call}."


def test_refused_words_that_hold_a_parenthesis_are_found_whole():
    with speaking("zh_CN"):
        assert said("start a new process (fork) (os.fork())") == "启动新进程（fork） (os.fork())"
        assert said("nothing we said (x)") == "nothing we said (x)"


def test_the_graphs_a_run_built_are_counted_in_each_language():
    run = run_code(THREE_BACKWARDS)
    assert run.built == 3
    with speaking("es"):
        assert run.film_words.startswith("Esta ejecución construyó 3 grafos, cada uno liberado por su pase "
                                         "hacia atrás")
    with speaking("zh_CN"):
        assert run.film_words.startswith("这次运行构建了 3 张图")
    assert run.to_dict()["graphs_in_words"].startswith("This run built 3 graphs")


@pytest.mark.parametrize("lang", ["zh_CN", "es"])
def test_every_limit_and_the_feature_off_read_in_the_language_with_its_numbers(lang):
    with speaking(lang):
        words = Limits().words()
        assert number(Limits().graph_nodes) in words  # 10,000 in Chinese, 10.000 in Spanish
        assert all(Limits().text(s.name) in words for s in SPECS)
        assert tr(OFF_MESSAGE) == OFF_MESSAGE  # the English message is no msgid: its Message is
    assert Limits().words().startswith("2 s of CPU time, 256 MB of memory")


@pytest.mark.parametrize("lang", ["zh_CN", "es"])
def test_every_ready_made_edit_has_its_title_and_lesson_in_the_language(lang):
    table = catalog(lang)
    for edit in EDITS.values():
        assert table.gettext(edit.lesson) != edit.lesson, edit.name
        assert edit.title == ".detach()" or table.gettext(edit.title) != edit.title, edit.name


def test_a_link_too_long_is_said_in_the_readers_language_with_its_number():
    with speaking("es"):
        _, message = code_from_link("x" * (MAX_LINK_CHARS + 1))
    with speaking("es"):
        limit = number(MAX_LINK_CHARS)  # 12.000
    assert message == f"El código del enlace tiene más de {limit} caracteres: se muestra el código semilla."


# No `predictions`, then `predictions` a number: the child's own sentences, by id and values.
NO_PREDICTIONS = "import torch\nx = torch.ones(2, requires_grad=True) * 2\n"
NOT_A_TENSOR = "predictions = 3\n"


def test_the_childs_own_sentences_come_by_id_and_read_in_each_language_while_its_record_stays_english():
    run = run_code(NO_PREDICTIONS)
    assert run.error.type == "NameError" and run.error.words[0][0] == "no predictions"
    english = run.error.message
    assert english.startswith("name 'predictions' is not defined: the graph is drawn")
    with speaking("zh_CN"):
        assert run.message.startswith("NameError: name 'predictions' is not defined：图是从你的代码")
    with speaking("es"):
        assert run.message.startswith("NameError: name 'predictions' is not defined: el grafo se dibuja")
    assert run.to_dict()["error"]["message"] == english  # the command line's JSON: English, no ids
    typed = run_code(NOT_A_TENSOR)
    with speaking("es"):
        assert typed.message == "TypeError: predictions (las predicciones) debe ser un Tensor, no int."


@pytest.mark.parametrize("words", [
    [["nothing we say", {}]],  # an id we never made
    [["not a tensor", {}]],  # its placeholder missing
    [["not a tensor", {"type": "int", "x": "{0.__class__}"}]],  # a name it has not
    [["not a tensor", {"type": ["int"]}]],  # a value that is neither text nor a whole number
])
def test_the_words_a_runs_child_sends_are_taken_only_as_ids_and_values_we_made(words):
    """The learner's code ran in the child: what it sends back is checked like the rest of its result."""
    error = {"kind": "error", "limit": None, "type": "TypeError", "message": "m", "line": None}
    assert check_error({**error, "words": [["not a tensor", {"type": "int"}]]})["words"] == \
        (("not a tensor", (("type", "int"),)),)
    with pytest.raises(BadResult):
        check_error({**error, "words": words})
