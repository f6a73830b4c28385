"""A page for tests/test_compat.py: each whole run says its number; a fragment says "part"."""

import streamlit as st

st.session_state["whole"] = st.session_state.get("whole", 0) + 1
st.markdown(f"whole run {st.session_state['whole']}")


@st.fragment
def part() -> None:
    st.markdown("part")


part()
