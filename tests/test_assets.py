"""The small components' browser code: built modules read as text, their values sent as data."""

from __future__ import annotations

import json

from stockdemo.ui.assets import JS, VALUES, component_js


def test_values_go_before_the_built_module_as_one_json_constant_it_reads():
    text = component_js("settle", watch_ms=3000)
    prefix, _, code = text.partition("\n")
    name, _, value = prefix.removeprefix("const ").partition(" = ")
    assert name == VALUES and json.loads(value.removesuffix(";")) == {"watch_ms": 3000}
    assert code == (JS / "settle.js").read_text(encoding="utf-8")
    assert VALUES in code  # the build kept protocol.js's reader of the values
    assert "@WATCH_MS@" not in code and "3000" not in code  # the period is data, not code


def test_every_component_module_is_built_and_has_a_default_export():
    for name in ("loader", "settle", "class_move", "class_keeper"):
        code = component_js(name)
        assert "\n" in code  # Streamlit reads text with a line break as code, not as a path
        assert "as default}" in code or "export default" in code, name
