"""A recorded run made a drawing, and the learner's own code: any record made a picture and a
replay (``view``: every page, the notebook and the command line draw through it), code carried
in a link (``link``), the seed's ready-made edits (``edits``), and the sandbox's run drawn for
the command line (``drawing``). The sandbox that runs it is ``stockdemo.sandbox``.
"""
