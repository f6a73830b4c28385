"""The Lab in a real browser: every experiment opened from its tab, run and drawn."""

import urllib.parse

import pytest
from playwright.sync_api import expect

from harness.drive import overflowing_metrics, screenshot, wait_for_run, wait_quiet
from stockdemo import lab
from stockdemo.lab.figures import report
from stockdemo.layout.steps import layout

pytestmark = pytest.mark.browser

GRAPH = "[data-testid='graph-view'][data-drawn-graph]"  # an interactive view once it has drawn


def metric(page, label: str) -> str:
    box = page.locator("[data-testid='sdMetric']").filter(has_text=label).first
    return box.locator("[data-testid='sdMetricValue']").inner_text()


def test_every_experiment_runs_from_its_tab_and_the_link_follows(server, page):
    page.goto(f"{server}/lab")
    wait_for_run(page)
    first = next(iter(lab.EXPERIMENTS))
    for name, (config_class, run) in lab.EXPERIMENTS.items():
        page.get_by_role("tab", name=name, exact=True).click()
        wait_for_run(page)
        page.wait_for_selector("[data-testid='sdMetric']:has-text('Run time')", timeout=60_000)
        expected = report(run(config_class()))
        # One graph view at a time; the picker swaps in each of the run's other graphs.
        # (Locators: the views live in shadow roots, which querySelectorAll does not enter.)
        for i, shown in enumerate(expected.graphs):
            if i:
                page.get_by_test_id("stButtonGroup").get_by_role("radio", name=shown.label).click()
                wait_for_run(page)
            view = page.locator(GRAPH)
            expect(view).to_have_count(1, timeout=60_000)
            expect(view).to_have_attribute(
                "data-nodes", str(len(layout(shown.graph, "auto", max_nodes=None).nodes)), timeout=20_000)
            expect(page.get_by_text(str(shown.caption), exact=True)).to_be_visible()
        if expected.figures:
            page.wait_for_function(
                "() => [...document.querySelectorAll(\"[data-testid='stPlotlyChart']\")]"
                f".filter(c => c.querySelector('.main-svg')).length == {len(expected.figures)}",
                timeout=60_000)
        assert page.locator("[data-testid='stException']").count() == 0, name
        # six figures in a 1,000 px row: once "33-37 nodes" ran into "43 nodes"
        assert overflowing_metrics(page) == [], name
        for _, message in expected.errors:
            # torch's message, word for word, in a code block
            assert message.split("\n")[0][:60] in "\n".join(
                page.locator("[data-testid='stCode']").all_inner_texts()), name
        # the first tab is the default, which a link leaves out
        in_link = urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query).get("lab")
        assert in_link == (None if name == first else [name])
    assert not [e for e in page.console_errors if "404" not in e], page.console_errors


def test_a_slider_reruns_the_experiment_and_redraws_its_graph(server, page):
    page.goto(f"{server}/lab?lab=Carried+hidden+state")
    wait_for_run(page)
    page.wait_for_selector(GRAPH, timeout=60_000)
    assert metric(page, "Nodes at batch 6, carried") == "174"
    carried = page.locator(GRAPH).first
    six = carried.get_attribute("data-drawn-graph")
    thumb = page.locator("[data-testid='stSlider']").filter(has_text="Batches in a row") \
        .get_by_role("slider")
    thumb.focus()
    thumb.press("ArrowRight")
    wait_for_run(page)
    page.wait_for_selector("[data-testid='sdMetric']:has-text('Nodes at batch 7, carried')",
                           timeout=60_000)
    seven = lab.carried_state(lab.DetachConfig(batches=7))
    assert metric(page, "Nodes at batch 7, carried") == str(seven.retained[-1].nodes)
    assert "batches=7" in page.url
    # the carried graph on screen is batch 7's: one row more
    expect(carried).not_to_have_attribute("data-drawn-graph", six, timeout=20_000)
    assert int(carried.get_attribute("data-nodes")) == len(
        layout(seven.after.graph, "auto", max_nodes=None).nodes)
    page.set_viewport_size({"width": 1440, "height": 2600})
    wait_quiet(page)
    screenshot(page, "lab_carried")


def test_a_graph_name_left_from_another_experiment_leaves_the_link(server, page):
    page.goto(f"{server}/lab?lab=In-place+change")
    wait_for_run(page)
    page.get_by_test_id("stButtonGroup").get_by_role("radio", name="Out of place").click()
    wait_for_run(page)
    assert "lab_graph=Out+of+place" in page.url
    page.get_by_role("tab", name="Carried hidden state", exact=True).click()
    wait_for_run(page)
    expect(page.get_by_test_id("stButtonGroup").get_by_role("radio", checked=True)).to_have_text("Carried")
    assert "lab_graph" not in page.url
    assert page.locator("[data-testid='stException']").count() == 0
