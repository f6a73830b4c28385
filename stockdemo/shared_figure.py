"""A plotly figure built once and shown to every session, its words said in each reader's language.

Its spec holds Messages (``i18n.later``) where it has words; ``to_dict``, which Streamlit
calls in the reader's own script run, says them then (docs/decisions.md, "i18n: words outside
the shared caches").
"""

from __future__ import annotations

import base64
import functools

import numpy as np
import plotly.graph_objects as go

from stockdemo.i18n import ENGLISH, Message, speaking


class SharedFigure(go.Figure):
    """A figure built once per config and shown to every session: read it, never change it.

    ``to_dict`` is what ``st.plotly_chart`` calls on every rerun. Plotly's own
    deep-copies the figure; this one hands out the spec it was built from.

    Without plotly's theme template: Streamlit draws the chart in its own theme
    (``st.plotly_chart(theme="streamlit")``, the default) and the template sent
    changes nothing on screen (screenshots with and without were pixel-identical).
    It was most of each chart's JSON, encoded again on every rerun, and most of
    what building a figure deep-copied.

    Its traces become plotly objects only when ``data`` is read (tests do;
    Streamlit reads ``to_dict``): plotly deep-copies every trace as it builds
    them, most of a chart's build time, on every new setting.

    Its words are Messages where the spec holds them (``_word_paths``, found once):
    ``to_dict`` copies only the dicts on the way to each and says it in the language
    spoken now; as a plotly object (``layout``, ``data``) the figure reads in English.
    """

    def __init__(self, spec: dict) -> None:
        self._shared_dict = spec
        self._words = _word_paths(spec)
        with speaking(ENGLISH):
            english = self.to_dict()
        self._english = english
        super().__init__({"layout": {**english["layout"], "template": {}}}, _validate=False)

    def to_dict(self) -> dict:
        spec = self._shared_dict
        for path in self._words:
            spec = _with(spec, path, str(_at(self._shared_dict, path)))
        return spec

    @functools.cached_property
    def _with_traces(self) -> go.Figure:
        return go.Figure({"data": self._english["data"], "layout": {"template": {}}}, _validate=False)

    @property
    def data(self) -> tuple:
        """The traces, as plotly objects (built on first read: nothing on screen needs them)."""
        return self._with_traces.data


def _word_paths(node: object, path: tuple = ()) -> list[tuple]:
    """Where ``node`` (a spec) holds Messages: the keys and indices that lead to each."""
    if isinstance(node, Message):
        return [path]
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in _word_paths(v, (*path, k))]
    if isinstance(node, list) and node and isinstance(node[0], (dict, list, Message)):
        return [p for i, v in enumerate(node) for p in _word_paths(v, (*path, i))]
    return []


def _at(node: object, path: tuple) -> object:
    for step in path:
        node = node[step]
    return node


def _with(node: dict | list, path: tuple, value: object) -> dict | list:
    """``node`` with ``value`` at ``path``, copying only the dicts and lists on the way."""
    copy = dict(node) if isinstance(node, dict) else list(node)
    copy[path[0]] = value if len(path) == 1 else _with(node[path[0]], path[1:], value)
    return copy


def typed_array(values: np.ndarray) -> dict:
    """An array as plotly.js's typed-array spec, which is how plotly itself sends numpy arrays."""
    values = np.ascontiguousarray(values)
    spec = {"dtype": values.dtype.str.lstrip("<|="), "bdata": base64.b64encode(values.tobytes()).decode()}
    if values.ndim > 1:
        spec["shape"] = ", ".join(str(n) for n in values.shape)
    return spec
