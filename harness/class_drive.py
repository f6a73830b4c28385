"""Driving class mode in real browsers: a teacher's tab, students' tabs, what the server sends them."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from harness.drive import SHOTS, wait_for_run

MAIN = "[data-testid='stMain']"
# A countdown the browser tests' server offers beside the product's (STOCKDEMO_COUNTDOWN_CHOICES):
# the lock is tested in seconds, not the product's shortest 15.
SHORT_COUNTDOWN_S = 5


def see(page, text: str | re.Pattern, timeout: float = 60_000) -> None:
    """Wait for text in the page's main area (the sidebar's code view holds other words)."""
    page.locator(MAIN).get_by_text(text).first.wait_for(timeout=timeout)


def go(page, path: str) -> None:
    """Through the app's own menu: the same session, so the teacher keeps the class."""
    expand = page.get_by_test_id("stExpandSidebarButton")  # closed: a stage page, presenter mode
    if expand.is_visible():
        expand.click()
    page.locator(f"[data-testid='stSidebar'] a[href$='{path}']").first.click()
    wait_for_run(page)


def on_screen(page, locator) -> bool:
    """The element is inside the window, without scrolling."""
    box = locator.bounding_box()
    size = page.viewport_size
    return (box is not None and box["width"] > 0 and box["y"] >= 0 and box["x"] >= 0
            and box["y"] + box["height"] <= size["height"] and box["x"] + box["width"] <= size["width"])


def in_full_view(page, locator) -> bool:
    """The element is inside the window and below Streamlit's header bar (opaque, fixed at
    the top: what scrolls under it is hidden), without scrolling."""
    header = page.locator("[data-testid='stHeader']").bounding_box()
    box = locator.bounding_box()
    top = header["y"] + header["height"] if header is not None else 0
    return on_screen(page, locator) and box["y"] >= top


def start_class(browser, server: str, viewport=(1440, 900), query: str = ""):
    """A teacher's tab with a class started -> (page, class code, join link)."""
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    teacher = context.new_page()
    teacher.goto(f"{server}/classroom{query}")
    wait_for_run(teacher)
    teacher.get_by_role("button", name="Start a class").click()
    see(teacher, "Join link")
    link = teacher.locator(f"{MAIN} [data-testid='stCode']").filter(has_text="class=").first.inner_text()
    code = re.search(r"class=([A-Z0-9]{8})", link)[1]
    return teacher, code, link


@dataclass
class Wire:
    """Every ForwardMsg the server sent one tab over its websocket, parsed as it arrived."""

    messages: list[ForwardMsg] = field(default_factory=list)
    raw: list[bytes] = field(default_factory=list)
    times: list[float] = field(default_factory=list)  # when each raw frame came
    message_times: list[float] = field(default_factory=list)  # ...and each parsed message

    def listen(self, page) -> None:
        def on_socket(ws) -> None:
            ws.on("framereceived", self._frame)
        page.on("websocket", on_socket)

    def _frame(self, payload) -> None:
        if isinstance(payload, str):
            payload = payload.encode()
        self.raw.append(payload)
        self.times.append(time.monotonic())
        msg = ForwardMsg()
        try:
            msg.ParseFromString(payload)
        except Exception:  # not a ForwardMsg: kept in raw, searched as bytes
            return
        self.messages.append(msg)
        self.message_times.append(self.times[-1])

    def story(self) -> list[str]:
        """What the server sent, one line per message: for a failure's report."""
        lines = []
        names: dict[str, str] = {}  # page script hash -> its address, as the server lists them
        for msg, at in zip(self.messages, self.message_times, strict=True):
            kind = msg.WhichOneof("type")
            meta = msg.metadata
            path = ".".join(map(str, meta.delta_path))
            if kind == "delta":
                what = msg.delta.WhichOneof("type")
                if what == "new_element":
                    element = msg.delta.new_element
                    what += ":" + element.WhichOneof("type")
                    if element.WhichOneof("type") == "exception":  # what went wrong, said
                        what += f" {element.exception.type}: {element.exception.message[:160]!r}"
                line = f"delta {what} @{path} frag={msg.delta.fragment_id[:8]}"
            elif kind in ("new_session", "navigation"):  # both name the page and list the pages
                page = getattr(msg, kind)
                names.update((p.page_script_hash, p.url_pathname or "/") for p in page.app_pages)
                line = f"{kind} page={names.get(page.page_script_hash, page.page_script_hash[:8])}"
            elif kind == "script_finished":
                line = f"script_finished {msg.script_finished}"
            elif kind == "page_info_changed":
                line = f"page_info_changed {msg.page_info_changed.query_string}"
            elif kind == "auto_rerun":
                line = f"auto_rerun {msg.auto_rerun.interval} {msg.auto_rerun.fragment_id[:8]}"
            else:
                line = kind or "?"
            run = meta.run
            fragments = ",".join(f[:6] for f in run.fragment_ids)
            lines.append(f"{at:.3f} [{run.script_run_id[:6]} {fragments}] {line}")
        return lines

    def contains(self, text: str) -> bool:
        """Anywhere in what was sent, as bytes: every element, every message."""
        needle = text.encode()
        return any(needle in frame for frame in self.raw)

    def button_labels(self) -> list[str]:
        """Every button (and form button) the server drew in this tab."""
        labels = []
        for msg in self.messages:
            if msg.WhichOneof("type") != "delta" or msg.delta.WhichOneof("type") != "new_element":
                continue
            element = msg.delta.new_element
            kind = element.WhichOneof("type")
            if kind == "button":
                labels.append(element.button.label)
        return labels


def report_on(page, wire: bool = True) -> Wire | None:
    """Keep what a tab's console says went wrong and (``wire``) what the server sent it,
    for a failure's report (wait_for_path) -> the Wire, or None."""
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(f"{time.monotonic():.3f} {e}"))
    page.on("console", lambda m: page.errors.append(f"{time.monotonic():.3f} {m.text[:300]}")
            if m.type == "error" else None)
    page.wire = Wire() if wire else None
    if page.wire is not None:
        page.wire.listen(page)
    return page.wire


def join_by_link(browser, link: str, viewport=(1280, 900), wire: bool = False):
    """A student's tab opened on the join link -> (page, Wire or None)."""
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    student = context.new_page()
    listened = report_on(student, wire)
    student.goto(link)
    wait_for_run(student)
    see(student, "following the teacher")
    return student, listened


def wait_for_path(page, path: str, timeout: float = 30.0) -> float:
    """Wait until the tab's address is on ``path`` -> seconds waited."""
    started = time.perf_counter()
    # The app moves between pages in place (history.pushState): no "load" to wait for.
    try:
        page.wait_for_function("p => location.pathname.endsWith('/' + p)", arg=path,
                               timeout=timeout * 1000)
    except Exception as err:
        wire = getattr(page, "wire", None)
        story = wire.story() if wire is not None else []
        if story:
            SHOTS.mkdir(parents=True, exist_ok=True)
            (SHOTS / "wait-for-path-wire.txt").write_text("\n".join(story))
        text = page.evaluate("() => document.body.innerText")[:300].replace("\n", " | ")
        raise AssertionError(f"not on /{path} after {timeout:.0f} s: {page.url} showing {text!r}; "
                             f"console: {getattr(page, 'errors', [])[:5]}"
                             + "".join(f"\n  {line}" for line in story[-60:])) from err
    try:
        wait_for_run(page)
    except Exception as err:
        raise AssertionError(f"{page.url} did not draw: {getattr(page, 'errors', [])[:5]}") from err
    return time.perf_counter() - started
