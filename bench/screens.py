"""Screenshots of every page, to compare the app before and after a change that must not show.

    .venv/bin/python bench/screens.py OUTDIR             # shoot every page into OUTDIR
    .venv/bin/python bench/screens.py OUTDIR --lang zh_CN es --pages home train --phone
    .venv/bin/python bench/screens.py OUTDIR --lang en zh_CN es --phone --screens 1  # first screens
    .venv/bin/python bench/screens.py --compare OLD NEW  # pixel difference of each pair

Shooting starts its own server on a free port (the app of this checkout) and Debian's
Chromium, then takes each page (and the Class page as a teacher after "Start a class") at
1440x900 and at 1280x720 in presenter mode (``--phone``: at 390x844 too), full page, once
its run has finished and its graph views have drawn; in each language of ``--lang`` (the
link's ``?lang=``; files LANG_SIZE_PAGE_N.png, English ones SIZE_PAGE_N.png). What changes
from one load to the next (times in ms, the class code and its QR) is masked, so two shots
of an unchanged app compare equal.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from itertools import product
from pathlib import Path
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for harness and stockdemo

from harness.helpers import CHROMIUM, CHROMIUM_ARGS, free_port, start_server, stop_server  # noqa: E402
from stockdemo.i18n import speaking, tr  # noqa: E402

PAGES = {"home": "/", "playground": "/playground", "train": "/train",
         "static": "/static_vs_dynamic", "debugging": "/debugging", "lab": "/lab",
         "lesson": "/lesson", "code": "/code", "class": "/classroom", "author": "/author"}
SIZES = {"1440x900": ((1440, 900), {}), "1280x720-present": ((1280, 720), {"present": "1"})}
PHONE = {"390x844": ((390, 844), {})}
GRAPHS = "[data-testid='graph-view']"
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
SCREENS = 8  # at most this many window heights of each page, scrolled down


def wait_for_run(page, timeout: float = 90_000) -> None:
    """As Streamlit's own e2e tests wait (a pause, the title, the app not running), and then
    until it stays so for a second with no placeholder left: a page may run twice on load."""
    page.wait_for_timeout(300)
    page.wait_for_selector("h1", timeout=timeout)
    quiet, deadline = 0, time.monotonic() + timeout / 1000
    while quiet < 3:
        page.wait_for_selector(f"{IDLE}", timeout=timeout)
        busy = page.locator("[data-testid='stSkeleton']").count()
        quiet = 0 if busy else quiet + 1
        if time.monotonic() > deadline:  # a placeholder that stays is in the shot, not a hang
            print(f"  {page.url}: still {busy} placeholder(s) after {timeout / 1000:.0f} s", flush=True)
            break
        page.wait_for_timeout(400)


def settle(page) -> None:
    """Until every graph view has drawn its graph, and its transition and plotly's have ended."""
    views = page.locator(GRAPHS)  # CSS locators pierce the component's shadow root
    for i in range(views.count()):
        view = views.nth(i)
        view.scroll_into_view_if_needed()
        page.wait_for_function(
            "([v]) => v.hasAttribute('data-drawn-graph') "
            "&& v.getAttribute('data-drawn-graph') === v.getAttribute('data-graph')",
            arg=[view.element_handle()], timeout=60_000)
    page.evaluate("() => { document.querySelector(\"[data-testid='stMain']\").scrollTop = 0; }")
    page.wait_for_timeout(1500)
    wait_for_run(page)


def masks(page) -> list:
    """What differs from one load to the next: times, the class code, its link and QR."""
    return [page.locator("[data-testid='sdMetric']").filter(has_text=re.compile(r"\d+ ms")),
            page.get_by_text(re.compile(r"This page update: \d+ ms")),
            page.locator("[data-testid='stImage']"),
            page.locator("[data-testid='stCode']").filter(has_text="class="),
            page.locator("[data-testid='stCode']").filter(has_text=re.compile(r"^[0-9a-f]{16,}$")),
            page.locator("p").filter(has_text=re.compile(r"^[A-Z0-9]{4}-[A-Z0-9]{4}$"))]


def screens(page, stem: Path, most: int = SCREENS) -> None:
    """The page a window at a time, from the top: STEM_0.png, STEM_1.png... (Streamlit
    scrolls its main area, not the document, so a full-page shot is the window alone)."""
    main = "[data-testid='stMain']"
    for i in range(most):
        page.screenshot(path=f"{stem}_{i}.png", mask=masks(page), animations="disabled")
        moved = page.evaluate(f"""() => {{ const m = document.querySelector("{main}");
            const before = m.scrollTop; m.scrollTop += m.clientHeight; return m.scrollTop - before; }}""")
        if moved <= 0:
            break
        page.wait_for_timeout(700)
    page.evaluate(f"() => {{ document.querySelector(\"{main}\").scrollTop = 0; }}")


def shoot(outdir: Path, langs: list[str], pages: list[str], sizes: dict, most: int = SCREENS) -> None:
    from playwright.sync_api import sync_playwright

    outdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    server = start_server(port)
    base = f"http://127.0.0.1:{port}"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            for lang, (size, ((width, height), query)), name in product(langs, sizes.items(), pages):
                context = browser.new_context(viewport={"width": width, "height": height})
                page = context.new_page()
                stem = outdir / f"{'' if lang == 'en' else lang + '_'}{size}_{name}"
                shoot_page(page, base + PAGES[name], {**query, **({} if lang == "en" else {"lang": lang})},
                           stem, lang, most)
                print(f"{lang} {size} {name}", flush=True)
                context.close()
            browser.close()
    finally:
        stop_server(server)


def shoot_page(page, url: str, query: dict[str, str], stem: Path, lang: str = "en",
               most: int = SCREENS) -> None:
    """One page at one size, window by window (and the Class page again as a teacher's)."""
    page.goto(url + ("?" + urlencode(query) if query else ""))
    wait_for_run(page)
    settle(page)
    screens(page, stem, most)
    if stem.name.endswith("_class"):
        with speaking(lang):  # the button as the page says it
            start, joined = tr("Start a class"), tr("Join link (students open it, or type the code on the "
                                                    "**Class** page):")
        joined = re.split(r"[(（]", joined)[0].strip()
        page.get_by_role("button", name=start).click()
        page.get_by_text(joined).first.wait_for(timeout=60_000)
        wait_for_run(page)
        settle(page)
        screens(page, stem.with_name(stem.name + "-teacher"), most)


def compare(old: Path, new: Path) -> int:
    """Print, per pair, the share of pixels that differ and where -> how many pairs differ."""
    import numpy as np
    from PIL import Image

    differ = 0
    for before in sorted(old.glob("*.png")):
        after = new / before.name
        if not after.exists():
            print(f"{before.name}: missing in {new}")
            differ += 1
            continue
        a = np.asarray(Image.open(before).convert("RGB")).astype(int)
        b = np.asarray(Image.open(after).convert("RGB")).astype(int)
        if a.shape != b.shape:
            print(f"{before.name}: size {a.shape[1]}x{a.shape[0]} -> {b.shape[1]}x{b.shape[0]}")
            differ += 1
            continue
        changed = np.abs(a - b).max(axis=2) > 16
        share = changed.mean()
        where = ""
        if changed.any():
            ys, xs = np.nonzero(changed)
            where = f" in x {xs.min()}-{xs.max()}, y {ys.min()}-{ys.max()}"
            differ += 1
        print(f"{before.name}: {share:.4%} of pixels differ{where}")
    return differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dirs", nargs="+", type=Path, help="OUTDIR, or OLD NEW with --compare")
    parser.add_argument("--compare", action="store_true")
    parser.add_argument("--lang", nargs="+", default=["en"], help="languages to shoot in (en, zh_CN, es)")
    parser.add_argument("--pages", nargs="+", default=list(PAGES), choices=list(PAGES))
    parser.add_argument("--phone", action="store_true", help="at 390x844 too")
    parser.add_argument("--screens", type=int, default=SCREENS, help="window heights of each page, at most")
    args = parser.parse_args()
    if args.compare:
        if len(args.dirs) != 2:
            parser.error("--compare takes OLD NEW")
        sys.exit(1 if compare(*args.dirs) else 0)
    shoot(args.dirs[0], args.lang, args.pages, {**SIZES, **(PHONE if args.phone else {})}, args.screens)


if __name__ == "__main__":
    main()
