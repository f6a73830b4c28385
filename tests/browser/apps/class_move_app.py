"""The class bar's mover alone, for tests/browser/test_class_move_browser.py.

The page draws the mover (stockdemo.ui.classmode.mover.draw_mover) while the browser still
carries the balancer's affinity cookie, as a student's class bar does when its replica
holds more than its share; once the tab has reloaded without the cookie, it says so.
"""

import streamlit as st

from stockdemo.ui.classmode.mover import AFFINITY_COOKIE, draw_mover

if st.context.cookies.get(AFFINITY_COOKIE):
    draw_mover()
else:
    st.markdown(f"Arrived without the cookie, seat {st.query_params.get('seat', '?')}.")
