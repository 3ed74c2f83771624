"""Interop: reading and writing the memory files other agents and tools already use (memdeck
JSON, Ralph markdown, Nova26 JSON, YAML, the managed block of CLAUDE.md / AGENTS.md)."""
