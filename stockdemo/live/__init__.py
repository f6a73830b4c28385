"""One live run of the Playground's model (``run``), and what a learner can look inside it for:
hidden states, per-step gradients, prints and saved tensors (``inspection``,
``hidden_states``), and the code that reproduces it (``reproduce``).
"""
