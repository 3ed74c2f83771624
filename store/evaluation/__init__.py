"""Evaluation: memdeck measured against labelled data (`replay_eval.py`: lessons a user had to
teach twice, over a project's replayed history)."""
