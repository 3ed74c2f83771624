"""The semantic signal's model: a static word-embedding model whose weights ship inside a PyPI
wheel, so nothing is downloaded at run time (the `memdeck[semantic]` extra).

The model is WordLlama's `l2_supercat` at 256 dimensions (the `wordllama` wheel carries its
16 MB of weights and its tokenizer). A text's vector is the mean of its tokens' rows, normalised,
exactly as `WordLlama.embed` computes it; the wheel's files are read directly (the tokenizer
with `tokenizers`, the matrix by memory-mapping the safetensors file and reading only the rows a
text uses), because importing `wordllama` itself costs about 0.85 s.

Vectors are stored at write time (the `memory_vector` table, each row with the model's id; see
`store.reindex`) and read at prime time, when only the task is embedded. Without the extra, `available()` is False, no vector is written and the
ranker works on words alone.
"""

from __future__ import annotations

import importlib.util
import json
import struct
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    import numpy as np

MODEL_ID = "wordllama-0.4.0/l2_supercat_256"
_WEIGHTS = "weights/l2_supercat_256.safetensors"
_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
_TENSOR = "embedding.weight"
DIMENSIONS = 256


@lru_cache(maxsize=1)
def _package_dir() -> Path | None:
    """Where the wordllama wheel's files are, found without importing it."""
    needed = ("numpy", "tokenizers")
    if any(importlib.util.find_spec(name) is None for name in needed):
        return None
    spec = importlib.util.find_spec("wordllama")
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent
    return folder if (folder / _WEIGHTS).is_file() and (folder / _TOKENIZER).is_file() else None


def available() -> bool:
    """Whether the semantic extra is installed (with its weights)."""
    return _package_dir() is not None


def model_id() -> str | None:
    """The id stored beside every vector; None without the extra."""
    return MODEL_ID if available() else None


class Embedder:
    """Texts to unit vectors with the wheel's model."""

    def __init__(self, folder: Path) -> None:
        import numpy as np
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(folder / _TOKENIZER))
        self.matrix = _memory_map(folder / _WEIGHTS, np)

    def embed(self, texts: Sequence[str]) -> "np.ndarray":
        """One normalised float32 row per text (a text with no token gives a zero row)."""
        import numpy as np

        out = np.zeros((len(texts), self.matrix.shape[1]), dtype=np.float32)
        for row, encoding in enumerate(self.tokenizer.encode_batch(list(texts), add_special_tokens=False)):
            ids = [i for i in encoding.ids if 0 <= i < self.matrix.shape[0]]
            if ids:
                out[row] = self.matrix[ids].astype(np.float32).mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


def _memory_map(path: Path, np) -> "np.ndarray":
    """The safetensors file's embedding matrix, memory-mapped: only the rows read are loaded."""
    with path.open("rb") as handle:
        (length,) = struct.unpack("<Q", handle.read(8))
        header = json.loads(handle.read(length))
    info = header[_TENSOR]
    if info["dtype"] != "F16":
        raise ValueError(f"{path}: expected float16 weights, found {info['dtype']}")
    start, _ = info["data_offsets"]
    return np.memmap(path, dtype=np.float16, mode="r", offset=8 + length + start, shape=tuple(info["shape"]))


@lru_cache(maxsize=1)
def embedder() -> Embedder | None:
    """The process's embedder, loaded on first use; None without the extra."""
    folder = _package_dir()
    return Embedder(folder) if folder is not None else None


def memory_text(title: str | None, content: str | None, tags: str | None) -> str:
    """What a memory's vector is made from: its title (when it says more than the content's
    start), content and tags (a JSON list, as stored)."""
    try:
        tag_text = ", ".join(json.loads(tags)) if tags else ""
    except (ValueError, TypeError):
        tag_text = tags or ""
    title, content = title or "", content or ""
    head = "" if content.startswith(title.rstrip("…")) else title + "\n"
    return f"{head}{content}\n{tag_text}".strip()


def to_blob(vector: "np.ndarray") -> bytes:
    import numpy as np

    return vector.astype(np.float16).tobytes()


def from_blobs(blobs: Sequence[bytes]) -> "np.ndarray":
    import numpy as np

    if not blobs:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype=np.float16).reshape(len(blobs), -1).astype(np.float32)
