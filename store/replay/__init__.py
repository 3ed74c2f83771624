"""Replay: a project's history run through memdeck, session by session, on the history's own
clock (`engine.py`), and the re-teachings found in it without labels (`reteaching.py`)."""
