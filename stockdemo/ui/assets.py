"""The browser code of the page's small components, built from ``frontend/graph_view/src``.

Streamlit's components v2 takes a component's JavaScript as text: each module is read
once, from ``js/`` next to this file (``cd frontend/graph_view && npm run build``
writes it). The names the browser and the server share are declared once, in
``frontend/graph_view/src/protocol.js``.
"""

from __future__ import annotations

import json
from pathlib import Path

JS = Path(__file__).with_name("js")
# The constant the modules read their values from (protocol.js's builtWith).
VALUES = "stockdemoValues"


def component_js(name: str, **values: object) -> str:
    """Built module ``name`` (``js/{name}.js``) as component code, with ``values`` before it.

    ``values``: constants known when the server starts (a path, a period), sent as data
    in a one-line prefix, ``const stockdemoValues = {...};``, never spliced into the code.
    """
    code = (JS / f"{name}.js").read_text(encoding="utf-8")
    return f"const {VALUES} = {json.dumps(values)};\n{code}"
