"""One look for every chart, graph and page: colours and type sizes.

Okabe-Ito colours: distinguishable with the common colour-vision
deficiencies. Plotly charts, the autograd graph (DOT and the interactive
view) and presenter mode all read them from here.
"""

from __future__ import annotations

# Okabe-Ito, in the order charts use them for series.
PALETTE: tuple[str, ...] = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00",
                            "#F0E442", "#000000")
BLUE, ORANGE, GREEN, PINK, SKY, VERMILION, YELLOW, BLACK = PALETTE

TEXT = "#1A1A1A"
MUTED = "#8C8C8C"  # block captions, edges: mid grey reads on white and on near-black
BORDER = "#555555"

# The autograd graph: dark text on mid-light fills, so nodes read the same on
# Streamlit's light and dark themes.
GRAPH_FILL: dict[str, str] = {
    "input": SKY,
    "parameter": ORANGE,
    "op": "#E4E4E4",
    "output": GREEN,
    "fused": PINK,
}
GRAPH_EDGE = MUTED
RECURRENT = VERMILION  # the hidden state carried from one step to the next

# Training charts: what each line means keeps one colour everywhere.
SERIES: dict[str, str] = {
    "actual": BLACK, "model": VERMILION, "persistence": GREEN, "moving_average": PINK,
    "train": BLUE, "val": ORANGE, "val_region": SKY, "test_region": MUTED,
}

# Type sizes, in px: readable from the back of a classroom.
FONT_FAMILY = "Helvetica"
FONT_SIZE = 14
TITLE_SIZE = 16

# Text on Streamlit's light greys, dark enough for WCAG AA (4.5:1) on the sidebar's
# #F0F3F6 and the code blocks' #F8F9FB: axe-core found Streamlit's own captions
# (#707172, 4.39:1) and code colours (keywords #1C83E1, 3.7:1) below it.
CAPTION = "#5E5F61"
CODE_TEXT = "#00664F"  # inline code; also .streamlit/config.toml's codeTextColor
CODE_KEYWORD = "#0060A8"
CODE_LITERAL = "#007A3D"
CODE_COMMENT = CAPTION
# A metric's change (ui.metric_row): AA contrast on white, 5.4:1 and 6.6:1.
DELTA_UP = "#007A3D"  # also .streamlit/config.toml's greenColor
DELTA_DOWN = "#B3261E"
PRESENTER_ROOT_PX = 22  # presenter mode's root font size: every rem on the page scales with it
