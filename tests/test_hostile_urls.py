"""Hostile links: random strings for every query parameter of every page.

Whatever the URL says, a page shows no traceback and every control ends up
within its declared bounds.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from harness.helpers import ROOT
from harness.links import assert_controls_in_bounds, nasty
from stockdemo import config
from stockdemo.ui import PAGES

KNOBS = {k.name: k for k in vars(config).values() if isinstance(k, config.IntKnob | config.ChoiceKnob)}
EXISTING = [path for path, _, _ in PAGES if (ROOT / path).exists()]

query = st.dictionaries(st.sampled_from(sorted(KNOBS) + ["unknown", "page", "lab", "lab_graph", "panel",
                                                         "compare", "replay", "code"]),
                        st.one_of(nasty, st.lists(nasty, min_size=2, max_size=3)), max_size=6)


@pytest.mark.parametrize("path", EXISTING)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(params=query)
def test_random_query_values_never_raise_and_stay_in_bounds(path, params):
    at = AppTest.from_file(str(ROOT / path), default_timeout=180)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert_controls_in_bounds(at)


@pytest.mark.parametrize("path", [p for p in EXISTING if p != "app.py"])
@pytest.mark.parametrize("value", ["inf", "-INF", "1e400"])
def test_infinite_seed_in_the_link_is_refused_with_a_message(path, value):
    # Streamlit's own integer number box raised on these (found by the test above)
    at = AppTest.from_file(str(ROOT / path), default_timeout=180)
    at.query_params["seed"] = value
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert_controls_in_bounds(at)
