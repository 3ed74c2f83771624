"""Capture: ingesting transcripts and notes, the heuristics that find learnings, markers, redaction."""
