"""The semantic signal's model: a static word-embedding model whose weights ship inside a PyPI
wheel, so nothing is downloaded at run time (the `memdeck[semantic]` extra).

The model is WordLlama's `l2_supercat` at 256 dimensions (the `wordllama` wheel carries its
16 MB of weights and its tokenizer). A text's vector is the mean of its tokens' rows, normalised,
as `WordLlama.embed` computes it (for the text with its whitespace made single spaces); the
wheel's files are read directly (the tokenizer by `BpeTokenizer`, the matrix by memory-mapping
the safetensors file and reading only the rows a text uses), because importing `wordllama`
itself costs about 0.85 s and building its tokenizer with `tokenizers` about 50 ms.

Vectors are stored at write time (the `memory_vector` table, each row with the model's id; see
`store.reindex`) and read at prime time, when only the task is embedded. Without the extra,
`available()` is False, no vector is written and the ranker works on words alone.
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
    if importlib.util.find_spec("numpy") is None:
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

        self.tokenizer = BpeTokenizer.load(folder / _TOKENIZER)
        self.matrix = _memory_map(folder / _WEIGHTS, np)

    def embed(self, texts: Sequence[str]) -> "np.ndarray":
        """One normalised float32 row per text (a text with no token gives a zero row)."""
        import numpy as np

        out = np.zeros((len(texts), self.matrix.shape[1]), dtype=np.float32)
        for row, text in enumerate(texts):
            ids = [i for i in self.tokenizer.encode(text) if 0 <= i < self.matrix.shape[0]]
            if ids:
                out[row] = self.matrix[ids].astype(np.float32).mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


class BpeTokenizer:
    """The model's tokenizer (Llama's byte-fallback BPE), in plain Python: the `tokenizers`
    library needs about 50 ms to build it, more than a prime may spend, while the vocabulary and
    merge ranks load in a few ms from a cache made once from the wheel's tokenizer file. Gives
    the ids `tokenizers` gives for text whose whitespace is single spaces (see `clean`)."""

    def __init__(self, vocab: dict[str, int], ranks: dict[str, int]) -> None:
        self.vocab = vocab
        self.ranks = ranks  # "left right" -> merge rank
        self._words: dict[str, tuple[int, ...]] = {}

    @classmethod
    def load(cls, path: Path) -> "BpeTokenizer":
        import marshal
        import os

        stat = path.stat()
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        cache = Path(base) / "memdeck" / f"bpe-{stat.st_size}-{int(stat.st_mtime)}.marshal"
        try:
            vocab, ranks = marshal.loads(cache.read_bytes())
            return cls(vocab, ranks)
        except (OSError, ValueError, EOFError, TypeError):
            pass
        model = json.loads(path.read_text(encoding="utf-8"))["model"]
        merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
        vocab, ranks = model["vocab"], {pair: rank for rank, pair in enumerate(merges)}
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            temporary = cache.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_bytes(marshal.dumps((vocab, ranks)))
            os.replace(temporary, cache)
        except OSError:
            pass  # no cache: the next load parses the file again
        return cls(vocab, ranks)

    def encode(self, text: str) -> list[int]:
        ids: list[int] = []
        for word in clean(text).split(" "):
            if word:
                ids.extend(self._word("\u2581" + word))
        return ids

    def _word(self, word: str) -> tuple[int, ...]:
        found = self._words.get(word)
        if found is None:
            found = self._words[word] = tuple(self._bpe(word))
        return found

    def _bpe(self, word: str) -> list[int]:
        symbols = list(word)
        ranks = self.ranks
        while len(symbols) > 1:
            best, at = None, -1
            for i in range(len(symbols) - 1):
                rank = ranks.get(symbols[i] + " " + symbols[i + 1])
                if rank is not None and (best is None or rank < best):
                    best, at = rank, i
            if best is None:
                break
            symbols[at:at + 2] = [symbols[at] + symbols[at + 1]]
        ids: list[int] = []
        for symbol in symbols:
            if symbol in self.vocab:
                ids.append(self.vocab[symbol])
            else:  # byte fallback: one token per UTF-8 byte
                ids.extend(self.vocab.get(f"<0x{byte:02X}>", 0) for byte in symbol.encode("utf-8"))
        return ids


def clean(text: str) -> str:
    """Whitespace as single spaces: what is embedded, for memories and tasks alike."""
    return " ".join(text.split())


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
