"""axe-core, the accessibility check, in a real browser: its script (from the npm registry,
package.json, ``npm ci``) and the WCAG rules it is run with. Its file missing is a failure,
not a skip: the check must run."""

from __future__ import annotations

import pytest

from harness.helpers import ROOT
from stockdemo import theme

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


def axe_source() -> str:
    if not AXE.exists():
        pytest.fail(f"{AXE.relative_to(ROOT)} is missing: run `npm ci` at the repository root "
                    "(`make test` does). The accessibility check is required, not optional.")
    return AXE.read_text(encoding="utf-8")


def frame_css_applied(page) -> None:
    """Wait until the page frame's CSS is in effect (a cold first run can paint before it).

    The audit is of the settled page: the sidebar's captions in the theme's caption colour.
    """
    r, g, b = (int(theme.CAPTION[i:i + 2], 16) for i in (1, 3, 5))
    page.wait_for_function(
        "(want) => { const c = document.querySelector("
        "'[data-testid=\"stSidebar\"] [data-testid=\"stCaptionContainer\"]');"
        " return c && getComputedStyle(c).color === want; }",
        arg=f"rgb({r}, {g}, {b})", timeout=60_000)
