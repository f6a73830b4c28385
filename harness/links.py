"""Hostile links: any text a URL's query may carry, and the check that whatever a link said, a
page's controls ended within their declared bounds (tests/test_hostile_urls.py, test_page_lab.py)."""

from __future__ import annotations

from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from harness.helpers import graph_sent

nasty = st.one_of(
    st.text(max_size=40),
    st.integers(-10**30, 10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.sampled_from(["", " ", "1e9", "-0", "NaN", "inf", "0x10", "5; DROP TABLE", "<script>",
                     "../../etc/passwd", "٣", "9" * 400, "1,5", "true", "None", "%00"]),
)


def assert_controls_in_bounds(at: AppTest) -> None:
    for slider in at.slider:
        value = slider.value
        values = value if isinstance(value, tuple | list) else [value]
        assert all(slider.min <= v <= slider.max for v in values), (slider.key, value)
    for box in at.number_input:
        assert box.min <= box.value <= box.max, (box.key, box.value)
    for box in at.selectbox:
        assert box.value in box.options or box.format_func(box.value) in box.options, box.key
    for view in at.get("bidi_component"):  # the stage's own controls (stockdemo/ui/stage.py)
        if not view.proto.json:  # the settle listener (stage_watch.settle_listener) is sent no data
            continue
        stage = graph_sent(view).get("stage") or {"controls": []}
        for c in stage["controls"]:
            if "choices" in c:
                assert c["value"] in [v for v, _ in c["choices"]], c
            else:
                assert isinstance(c["value"], int) and c["low"] <= c["value"] <= c["high"], c
