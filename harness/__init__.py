"""What tests and benchmarks share, so neither imports the other.

``helpers``: paths, a free port, the app's server, reading a page back (no ``stockdemo``
import, so a benchmark that measures the server from outside loads no torch);
``drive``: a Streamlit page in a real browser (wait for runs, screenshots);
``cgroups``: a small host made with a cgroup, and what its processes cost;
``notebooks``: JupyterLab on a free port, a notebook written and run.
"""
