"""The order a run happened in: autograd writing its graph down, then backward() walking it.

``trace`` holds ``Trace``, torch-free, which the renderers read; ``model`` replays the
Playground's model, ``record`` any recorded run (the learner's code, a notebook model).
"""
