"""Retrieval: ranking, the relevance gate, packing into a block, the semantic signal, and its evaluation."""
