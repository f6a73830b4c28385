"""Every run of this page ends by saying how often its button was pressed (test_drive_browser.py)."""

import streamlit as st

st.title("Presses")
if st.button("Press"):
    st.session_state.presses = st.session_state.get("presses", 0) + 1
for line in range(200):  # a run that takes a while: a wait that returns mid-run sees the old count
    st.caption(f"Line {line}")
st.markdown(f"Pressed {st.session_state.get('presses', 0)} times.")
