"""The semantic signal's model: a static word-embedding model whose weights ship inside a PyPI
wheel, so nothing is downloaded at run time (the `memdeck[semantic]` extra).

The model is WordLlama's `l2_supercat` at 256 dimensions (the `wordllama` wheel carries its
16 MB of weights and its tokenizer). A text's vector is the mean of its tokens' rows, normalised,
as `WordLlama.embed` computes it (for the text with its whitespace made single spaces); the
wheel's files are read directly (the tokenizer by `BpeTokenizer`, the matrix by memory-mapping
the safetensors file and reading only the rows a text uses), because importing `wordllama`
itself costs about 0.85 s and building its tokenizer with `tokenizers` about 50 ms.

Vectors are stored at write time (packed by project, each with the model's id:
`store/backends/vectors.py`; see `store.index.reindex`) and read at prime time, when only the
task is embedded. Without the extra, `available()` is False, no vector is written and the
ranker works on words alone.
"""

from __future__ import annotations

import importlib.util
import json
import mmap
import struct
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from store.backends import embedding_rows
from store.engine.numpy_import import import_numpy  # noqa: F401 (re-exported)
from store.engine import environment

if TYPE_CHECKING:
    import numpy as np

MODEL_ID = "wordllama-0.4.0/l2_supercat_256"
_WEIGHTS = "weights/l2_supercat_256.safetensors"
_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
_TENSOR = "embedding.weight"
DIMENSIONS = 256
# What is embedded of a text: a memory's gist is in its first few thousand words.
MAX_WORDS = 2000
MAX_WORD = 64


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
        np = import_numpy()
        self.tokenizer = BpeTokenizer.load(folder / _TOKENIZER, lazy=True)
        self.matrix = _memory_map(folder / _WEIGHTS, np)

    def embed(self, texts: Sequence[str]) -> "np.ndarray":
        """One normalised float32 row per text (a text with no token gives a zero row)."""
        np = import_numpy()

        if sum(len(text) for text in texts) > LAZY_CHARACTERS:
            self.tokenizer.load_all()
        out = np.zeros((len(texts), self.matrix.shape[1]), dtype=np.float32)
        for row, text in enumerate(texts):
            ids = [i for i in self.tokenizer.encode(text) if 0 <= i < self.matrix.shape[0]]
            if ids:
                out[row] = self.matrix[ids].astype(np.float32).mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


# Up to this much text (a task, say) the tokenizer looks each token and merge up in its cache
# file as it meets them; beyond it (memories written in bulk) it loads them all.
LAZY_CHARACTERS = 2000


def _cache_path(path: Path, suffix: str) -> Path:
    stat = path.stat()
    return environment.cache_home() / "memdeck" / f"bpe-{stat.st_size}-{int(stat.st_mtime)}.{suffix}"


def _replace(target: Path, write) -> None:
    """Write a cache file under a temporary name, then put it in place whole."""
    import os

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_suffix(f".{os.getpid()}.tmp")
        temporary.unlink(missing_ok=True)
        write(temporary)
        os.replace(temporary, target)
    except (OSError, ValueError):
        pass  # no cache: the next load parses the wheel's file again


class _Lookup:
    """A table of the tokenizer's cache file, read one key at a time (and remembered): a task
    meets a few hundred of the 90,000 tokens and merges, and loading them all costs 25 ms."""

    def __init__(self, connection, table: str) -> None:
        self._connection = connection
        self._table = table
        self._known: dict[str, int | None] = {}

    def get(self, key: str, default: int | None = None) -> int | None:
        if key not in self._known:
            self._known[key] = embedding_rows.value(self._connection, self._table, key)
        found = self._known[key]
        return default if found is None else found

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def __getitem__(self, key: str) -> int:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found


class BpeTokenizer:
    """The model's tokenizer (Llama's byte-fallback BPE), in plain Python: the `tokenizers`
    library needs about 50 ms to build it, more than a prime may spend. Its vocabulary and merge
    ranks are cached once from the wheel's tokenizer file, both as a marshal file (all of them
    load in 25 ms) and as a small SQLite file a lazy tokenizer reads only the entries it meets
    from (a task's few words: about 1 ms; its SQL is `store/backends/embedding_rows.py`'s).
    Gives the ids `tokenizers` gives for text whose whitespace is single spaces (see `clean`)."""

    def __init__(self, vocab, ranks, path: Path | None = None) -> None:
        self.vocab = vocab
        self.ranks = ranks  # "left right" -> merge rank
        self._path = path  # the wheel's file, while the tables are lazy
        self._words: dict[str, tuple[int, ...]] = {}

    @classmethod
    def load(cls, path: Path, *, lazy: bool = False) -> "BpeTokenizer":
        if lazy:
            connection = _open_lookup(path)
            if connection is not None:
                return cls(_Lookup(connection, "vocab"), _Lookup(connection, "ranks"), path)
        return cls(*_load_tables(path))

    def load_all(self) -> None:
        """Every token and merge in memory (for much text), if the tables are lazy."""
        if self._path is not None:
            self.vocab, self.ranks = _load_tables(self._path)
            self._path = None

    def encode(self, text: str) -> list[int]:
        ids: list[int] = []
        for word in clean(text).split(" ")[:MAX_WORDS]:
            # BPE is quadratic in a word's length: a long run without spaces goes in pieces.
            for start in range(0, len(word), MAX_WORD):
                ids.extend(self._word(("\u2581" if start == 0 else "") + word[start:start + MAX_WORD]))
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


def _parse(path: Path) -> tuple[dict[str, int], dict[str, int]]:
    model = json.loads(path.read_text(encoding="utf-8"))["model"]
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    return model["vocab"], {pair: rank for rank, pair in enumerate(merges)}


def _load_tables(path: Path) -> tuple[dict[str, int], dict[str, int]]:
    import marshal

    cache = _cache_path(path, "marshal")
    try:
        vocab, ranks = marshal.loads(cache.read_bytes())
        return vocab, ranks
    except (OSError, ValueError, EOFError, TypeError):
        pass
    vocab, ranks = _parse(path)
    _replace(cache, lambda temporary: temporary.write_bytes(marshal.dumps((vocab, ranks))))
    return vocab, ranks


def _open_lookup(path: Path):
    """The SQLite cache of the tokenizer's tables, made on first use; None if it cannot be."""
    cache = _cache_path(path, "sqlite")
    if not cache.is_file():
        vocab, ranks = _load_tables(path)
        _replace(cache, lambda temporary: embedding_rows.write_tables(temporary, (("vocab", vocab), ("ranks", ranks))))
    return embedding_rows.open_tables(cache)


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
    rows, columns = info["shape"]
    # A plain array over the mapping (np.memmap's subclass makes every row lookup ~10x slower).
    with path.open("rb") as handle:
        mapping = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    return np.frombuffer(mapping, dtype=np.float16, count=rows * columns, offset=8 + length + start).reshape(
        rows, columns)


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
    np = import_numpy()

    return vector.astype(np.float16).tobytes()


def from_blobs(blobs: Sequence[bytes]) -> "np.ndarray":
    np = import_numpy()

    if not blobs:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype=np.float16).reshape(len(blobs), -1).astype(np.float32)
