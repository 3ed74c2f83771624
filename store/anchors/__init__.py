"""Anchors: memories pointing at code, checked against git."""
