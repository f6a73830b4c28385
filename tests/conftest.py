"""Shared test set-up: one torch thread (as on the server), and the app's root."""

from pathlib import Path

import pytest
import streamlit as st
import torch

ROOT = Path(__file__).resolve().parent.parent
torch.set_num_threads(1)


def pytest_collection_finish(session):
    # The container image and the wheel's environment take minutes to build: started now,
    # one after the other, beside the tests before the ones that use them, not in front.
    if session.config.option.collectonly:
        return
    files = {item.path.name for item in session.items}
    if files & {"test_image.py", "test_kube.py"}:
        from tests.test_image import start_build

        start_build()
    if "test_package.py" in files:
        from tests.test_package import start_package

        start_package()


@pytest.fixture
def clear_caches():
    """st.cache_* is shared by every AppTest in the process: start cold where it matters."""
    from stockdemo.ui.caches import clear_held

    st.cache_data.clear()
    st.cache_resource.clear()
    clear_held()
    yield
