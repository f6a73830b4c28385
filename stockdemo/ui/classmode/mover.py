"""Moving a student's tab to a less busy replica: it reloads without the balancer's cookie."""

from __future__ import annotations

import os
import re

import streamlit as st

from stockdemo.i18n import tr
from stockdemo.ui.assets import component_js

# The balancer's affinity cookie (deploy/haproxy.cfg's SRV, the Ingress's in deploy/k8s):
# a tab that drops it and reloads lands on the replica with the fewest connections.
AFFINITY_COOKIE = os.environ.get("STOCKDEMO_AFFINITY_COOKIE", "SRV")
if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", AFFINITY_COOKIE):
    raise ValueError(f"STOCKDEMO_AFFINITY_COOKIE is not a cookie name: {AFFINITY_COOKIE!r}")
_MOVER = st.components.v2.component("stockdemo_class_move", html="<span hidden></span>",
                                    js=component_js("class_move"))


def draw_mover() -> None:
    """This replica holds more than its share of the class (stockdemo.classroom.replicas): the tab reloads
    without the balancer's cookie, keeping its class and seat (they are in its address)."""
    st.caption(":material/sync_alt: " + tr("Moving you to a less busy server…"))
    _MOVER(data={"cookie": AFFINITY_COOKIE}, key="class_move", height=0)
