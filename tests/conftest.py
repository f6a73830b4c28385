"""Shared test set-up: one torch thread (as on the server), and the app's root."""

from pathlib import Path

import pytest
import streamlit as st
import torch

ROOT = Path(__file__).resolve().parent.parent
torch.set_num_threads(1)


def pytest_collection_finish(session):
    # The container image takes minutes to build: started now, beside the tests before
    # the ones that use it (tests/test_image.py, tests/test_kube.py), not in front of them.
    if any(item.path.name in ("test_image.py", "test_kube.py") for item in session.items):
        from tests.test_image import start_build

        start_build()


@pytest.fixture
def clear_caches():
    """st.cache_* is shared by every AppTest in the process: start cold where it matters."""
    st.cache_data.clear()
    st.cache_resource.clear()
    yield
