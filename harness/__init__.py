"""What tests and benchmarks share, so that no test imports a benchmark or another test module
(tests/test_architecture.py checks it). Fixtures stay in the conftest files, pytest's way.

- the repository and its servers: ``helpers`` (ROOT, the one; a free port, the app's server,
  reading a page back; no ``stockdemo`` import, so a benchmark that measures the server from
  outside loads no torch), ``builds`` (the image and the wheel, built beside the tests),
  ``import_graph`` (who imports whom, Python and JavaScript), ``cgroups`` (a small host);
- torch's own answer: ``autograd`` (the reference grad_fn walk), ``learners`` (learners'
  programs, run here as the sandbox runs them), ``hostile`` (programs that must be stopped);
- sessions over Streamlit's websocket: ``sessions``, ``servers`` (the app under test, what
  its processes cost), ``measures``, ``session_probe``, ``class_member`` and ``class_room``
  (a class under load), ``class_students``, ``class_programs``, ``redis_server``;
- a page in a real browser: ``drive``, ``graph_view``, ``editor``, ``axe``, ``charts``,
  ``class_drive``, ``notebooks`` (JupyterLab);
- what a link or an upload may hold: ``links``, ``uploads``.
"""
