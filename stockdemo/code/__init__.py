"""The learner's own code: carried in a link (``link``), the seed's ready-made edits
(``edits``), a recorded run made a picture (``view``), and the sandbox's run drawn for the
command line (``drawing``). The sandbox that runs it is ``stockdemo.sandbox``.
"""
