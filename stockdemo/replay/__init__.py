"""The order a run happened in: autograd writing its graph down, then backward() walking it.

``trace`` holds ``Trace``, torch-free, which the renderers read; ``record`` reads it from any
recorded run's replay (the Playground's model, a training step, the learner's code, a notebook
model), which ``stockdemo.graph.backward`` wrote.
"""
