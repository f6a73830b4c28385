"""A laid-out run made visible: the interactive view's payload, DOT, the SVG poster, the handout,
and the node table that is the view's text alternative. Pure: no torch, no Streamlit.
"""
