"""Shared test set-up: one torch thread (as on the server), and the app's root."""

from pathlib import Path

import pytest
import streamlit as st
import torch

ROOT = Path(__file__).resolve().parent.parent
torch.set_num_threads(1)


@pytest.fixture
def clear_caches():
    """st.cache_* is shared by every AppTest in the process: start cold where it matters."""
    st.cache_data.clear()
    st.cache_resource.clear()
    yield
