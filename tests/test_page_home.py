"""Home page through AppTest: the seed snippet and its live run."""

import re

from streamlit.testing.v1 import AppTest

from harness.helpers import ROOT


def test_home_run_it_shows_the_predictions_tensor_of_shape_10_by_1(clear_caches):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    assert any("class StockPredictor" in c.value for c in at.code)
    assert not any("tensor(" in c.value for c in at.code)
    at.button(key="run_seed").click().run()
    assert not at.exception
    printed = [c.value for c in at.code if c.value.startswith("tensor(")]
    assert len(printed) == 1
    rows = re.findall(r"\[-?\d+\.\d+\]", printed[0])  # one [value] per sequence
    assert len(rows) == 10 and "grad_fn=<AddmmBackward0>" in printed[0]
    assert any("(10, 1)" in m.value for m in at.markdown)
