"""Build tests/data/pairs/ralph-pairs.yaml: labelled pairs of memory texts for `memdeck eval-pairs`.

Every pair starts from a real memory: the first quoted line of each `### mem-...` entry of the
Ralph memory files in ../shared/fixtures/ralph (public repositories, see SOURCES.tsv there; the
file names say which). The second text of a pair is either another real memory (classes
`related` and `unrelated`, and `same` for memories a project stored twice word for word), or the
first text changed by one of the written rules below (classes `same`, `update`, `contradiction`).
The rules say how people restate, update and reverse a statement in general; none was written
with the decision module's word lists in view, and the decision is never run here.

- same (reworded): R1 case of the first letter flipped and the final full stop added or dropped;
  R2 a lead-in ("Note:", "Remember that", "FYI -"); R3 connectives swapped for ones that mean the
  same (because/since, when/whenever, instead of/rather than, so that/so, and then/then,
  before/prior to); R4 articles dropped or doubled spaces removed; R5 two clauses around a
  comma or semicolon swapped. A rule that cannot apply to a text is skipped; the first rule
  that changes the text is used, in an order chosen by the pair's seed.
- update: U1 a number or version changed (the last number goes up by 1-9, or a version's last
  part); U2 a path or file name changed (another real file name from the corpus, or its
  directory renamed); U3 a back-ticked or quoted identifier, command or flag replaced by another
  one from the corpus; U4 a tool or library name replaced by another of the same kind (npm/pnpm,
  jest/vitest, cargo/rustc, python/python3, ...). A failure record (`failure: cmd=..., exit=...,
  error=..., next=...`) whose command or error such a rule changed records another failure, not
  the same one updated: that pair is labelled `related`, as the real pairs are (below); a change
  in its exit code or its `next=` advice stays an update.
- contradiction: C1 an imperative or "should/must/can/is/are" statement negated ("Use X" ->
  "Do not use X", "X is Y" -> "X is not Y"); C2 a negated statement made positive ("never" ->
  "always", "do not X" -> "X", "avoid" -> "prefer", "without" -> "with"); C3 a word replaced by
  its opposite (before/after, enable/disable, always/never, include/exclude, true/false).
- related: two different memories of one project with at least a fifth of their words in
  common (most similar first, at most PER_PROJECT of a project), labelled by reading them: a failure with the same command on
  another file is related, not an update; a pair that is one fact changed is moved to `update`
  and a pair that says the same twice to `same` (OVERRIDES).
- unrelated: two memories of different projects.

Halves: every pair carries `half: tune` or `half: test`, by project file (files alternate by
size), so thresholds chosen on one half are reported on projects they never saw.

Run: .venv/bin/python tests/data/pairs/build_pairs.py [RALPH_FOLDER] > tests/data/pairs/ralph-pairs.yaml
"""

from __future__ import annotations

import hashlib
import itertools
import random
import re
import sys
from pathlib import Path

import yaml

# The Ralph files: the first argument, else ../shared/fixtures/ralph beside the clone.
RALPH = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[3].parent / "shared" / "fixtures" / "ralph"
SEED = 27
PER_PROJECT = 6  # related pairs from one project at most

# (old memory id, new memory id) -> label, for `related` pairs read and found to be otherwise.
OVERRIDES: dict[tuple[str, str], str] = {
    # The same failure, and the advice for it changed: an update.
    ("mem-1771372345-5184", "mem-1771372910-e0c5"): "update",
}

TOOLS = [("npm", "pnpm"), ("pnpm", "yarn"), ("jest", "vitest"), ("vitest", "jest"), ("cargo", "rustc"),
         ("python3", "python"), ("python", "uv run python"), ("pytest", "unittest"), ("git", "jj"),
         ("sed", "awk"), ("rg", "grep"), ("cat", "head"), ("bun", "node"), ("node", "deno"),
         ("tail", "less"), ("Swift", "Kotlin"), ("SwiftUI", "UIKit"), ("React", "Vue"),
         ("Playwright", "Cypress"), ("Docker", "Podman"), ("Postgres", "MySQL"), ("zsh", "bash")]
CONNECTIVES = [("because", "since"), ("when", "whenever"), ("instead of", "rather than"),
               ("so that", "so"), ("and then", "then"), ("before", "prior to"), ("to avoid", "so as to avoid")]
LEADS = ["Note: ", "Remember that ", "FYI - ", "Reminder: "]
OPPOSITES = [("before", "after"), ("after", "before"), ("enable", "disable"), ("disable", "enable"),
             ("always", "never"), ("include", "exclude"), ("true", "false"), ("false", "true"),
             ("allow", "block"), ("required", "optional")]
POSITIVE = [(r"\bnever\b", "always"), (r"\bdo not\b ", ""), (r"\bdon't\b ", ""), (r"\bavoid\b", "prefer"),
            (r"\bwithout\b", "with"), (r"\bnot\b ", ""), (r"\bno\b ", "some ")]
NEGATABLE = [(r"\b(is|are|was|were|must|should|can|will|does|do)\b", r"\1 not")]
IMPERATIVES = ("use", "run", "keep", "add", "prefer", "check", "treat", "call", "wrap", "write", "read",
               "set", "install", "create", "validate", "verify", "always", "make", "put", "commit")


def memories() -> list[tuple[str, str, str]]:
    """(file, memory id, first line) of every memory, in file order; repeated texts once per file."""
    found = []
    for path in sorted(RALPH.glob("*.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        for memory_id, line in re.findall(r"^### (mem-\S+)\n> (.+)$", text, re.M):
            line = line.strip()
            if 20 <= len(line) <= 400:
                found.append((path.name, memory_id, line))
    return found


def reworded(text: str, rng: random.Random) -> tuple[str, str] | None:
    rules = ["R1", "R2", "R3", "R4", "R5"]
    rng.shuffle(rules)
    for rule in rules:
        new = text
        if rule == "R1":
            first = new[0].lower() if new[0].isupper() else new[0].upper()
            new = first + new[1:]
            new = new[:-1] if new.endswith(".") else new + "."
        elif rule == "R2":
            lead = rng.choice(LEADS)
            new = lead + (new[0].lower() + new[1:] if lead.startswith("Remember") and new[:2].istitle() else new)
        elif rule == "R3":
            for a, b in CONNECTIVES:
                if re.search(rf"\b{a}\b", new):
                    new = re.sub(rf"\b{a}\b", b, new, count=1)
                    break
        elif rule == "R4":
            new = re.sub(r"\b(the|a|an) ", "", new, count=2)
        elif rule == "R5":
            parts = re.split(r"(?<=\w)[;,] ", new, maxsplit=1)
            if len(parts) == 2 and len(parts[0]) > 15 and len(parts[1]) > 15 and "=" not in new:
                second = parts[1].rstrip(".")
                new = second[0].upper() + second[1:] + "; " + parts[0][0].lower() + parts[0][1:]
        if new != text:
            return new, rule
    return None


def updated(text: str, rng: random.Random, corpus: list[str]) -> tuple[str, str] | None:
    rules = ["U1", "U2", "U3", "U4"]
    rng.shuffle(rules)
    files = sorted({f for t in corpus for f in re.findall(r"\b[\w-]+\.(?:rs|ts|tsx|py|md|json|swift|lua|yml|yaml|js|toml)\b", t)})
    quoted = sorted({q for t in corpus for q in re.findall(r"`([^`]{2,40})`", t)})
    for rule in rules:
        new = text
        if rule == "U1":
            numbers = list(re.finditer(r"\d+(?:\.\d+)*", new))
            if numbers:
                m = numbers[-1]
                parts = m.group().split(".")
                parts[-1] = str(int(parts[-1]) + rng.randint(1, 9))
                new = new[:m.start()] + ".".join(parts) + new[m.end():]
        elif rule == "U2":
            found = re.findall(r"\b[\w-]+\.(?:rs|ts|tsx|py|md|json|swift|lua|yml|yaml|js|toml)\b", new)
            if found:
                other = rng.choice([f for f in files if f != found[0]] or ["other.md"])
                new = new.replace(found[0], other, 1)
        elif rule == "U3":
            found = re.findall(r"`([^`]{2,40})`", new)
            if found:
                new = new.replace(f"`{found[0]}`", f"`{rng.choice([q for q in quoted if q != found[0]])}`", 1)
        elif rule == "U4":
            for a, b in TOOLS:
                if re.search(rf"\b{re.escape(a)}\b", new):
                    new = re.sub(rf"\b{re.escape(a)}\b", b, new, count=1)
                    break
        if new != text:
            return new, rule
    return None


FAILURE = re.compile(r"\bcmd=(.+?)(?:,\s*exit=[^,]*)?,\s*error=(.+?)(?:,\s*next=.*)?$", re.S)


def failed(text: str) -> tuple[str, str] | None:
    """A failure record's command and error, as written; None for another text."""
    found = FAILURE.search(text)
    return (found.group(1), found.group(2)) if found else None


def contradicted(text: str, rng: random.Random) -> tuple[str, str] | None:
    lowered = text.lower()
    for pattern, replacement in POSITIVE:
        if re.search(pattern, lowered):
            new = re.sub(pattern, replacement, text, count=1, flags=re.I)
            return re.sub(r"\s+", " ", new).strip(), "C2"
    words = lowered.split()
    if words and words[0].rstrip(":,") in IMPERATIVES:
        return "Do not " + text[0].lower() + text[1:], "C1"
    for a, b in OPPOSITES:
        if re.search(rf"\b{a}\b", lowered):
            return re.sub(rf"\b{a}\b", b, text, count=1, flags=re.I), "C3"
    for pattern, replacement in NEGATABLE:
        if re.search(pattern, text):
            return re.sub(pattern, replacement, text, count=1), "C1"
    return None


def main() -> None:
    rng = random.Random(SEED)
    found = memories()
    texts = [t for _, _, t in found]
    sizes: dict[str, int] = {}
    for name, _, _ in found:
        sizes[name] = sizes.get(name, 0) + 1
    halves: dict[str, str] = {}
    filled = {"tune": 0, "test": 0}
    for name in sorted(sizes, key=lambda n: (-sizes[n], n)):  # largest first, into the emptier half
        half = min(filled, key=lambda h: (filled[h], h == "tune"))
        halves[name] = half
        filled[half] += sizes[name]
    pairs: list[dict] = []

    def emit(label: str, rule: str, old: tuple[str, str, str], new_text: str, new_source: tuple[str, str] | None = None) -> None:
        pairs.append({"id": f"p{len(pairs) + 1:03d}", "label": label, "rule": rule, "half": halves[old[0]],
                      "old": old[2], "new": new_text,
                      "source": f"{old[0]}#{old[1]}" + (f" + {new_source[0]}#{new_source[1]}" if new_source else "")})

    unique = list({t: (f, i, t) for f, i, t in found}.values())
    order = unique[:]
    rng.shuffle(order)
    per_class = {"same": 45, "update": 45, "contradiction": 45}
    for label, limit in per_class.items():
        made = 0
        for item in order:
            if made >= limit:
                break
            seeded = random.Random(int(hashlib.sha256(f"{label}{item[1]}".encode()).hexdigest()[:8], 16))
            change = (reworded(item[2], seeded) if label == "same" else updated(item[2], seeded, texts)
                      if label == "update" else contradicted(item[2], seeded))
            if change is None:
                continue
            if label == "update" and failed(item[2]) is not None and failed(item[2]) != failed(change[0]):
                emit("related", change[1], item, change[0])  # another command or error: another failure
                made += 1
                continue
            emit(label, change[1], item, change[0])
            made += 1
        rng.shuffle(order)
    # Real pairs: the same text stored twice in one project, related memories, unrelated ones.
    by_file: dict[str, list[tuple[str, str, str]]] = {}
    for item in found:
        by_file.setdefault(item[0], []).append(item)
    twice, related = [], []
    for items in by_file.values():
        for a, b in itertools.combinations(items, 2):
            wa, wb = set(re.findall(r"\w{3,}", a[2].lower())), set(re.findall(r"\w{3,}", b[2].lower()))
            share = len(wa & wb) / max(1, len(wa | wb))
            if a[2] == b[2]:
                twice.append(((a, b), share))
            elif share >= 0.2:
                related.append(((a, b), share))
    seen_texts = set()
    for (a, b), _ in twice:
        if a[2] not in seen_texts:
            seen_texts.add(a[2])
            emit("same", "R0", b, a[2], (a[0], a[1]))
    related.sort(key=lambda r: (-r[1], r[0][0][1], r[0][1][1]))
    used: set[tuple[str, str, str]] = set()
    for (a, b), _ in related:
        key = tuple(sorted((a[2], b[2])))
        if any(k[:2] == key for k in used):
            continue
        if key in used or len([p for p in pairs if p["rule"] == "real"]) >= 40:
            continue
        if sum(1 for k in used if k[2] == a[0]) >= PER_PROJECT:
            continue  # one project's many look-alike failures would make the class about them
        used.add(key + (a[0],))
        older, newer = (b, a) if a[1] > b[1] else (a, b)
        emit(OVERRIDES.get((older[1], newer[1]), "related"), "real", older, newer[2], (newer[0], newer[1]))
    names = sorted(by_file)
    for _ in range(25):
        first, second = rng.sample(names, 2)
        emit("unrelated", "real", rng.choice(by_file[first]), (b := rng.choice(by_file[second]))[2], (b[0], b[1]))
    header = ("# Labelled pairs of memory texts for `memdeck eval-pairs` (issue 27). Built by\n"
              "# tests/data/pairs/build_pairs.py (its docstring states the rules) from the Ralph memory\n"
              "# files of ../shared/fixtures/ralph: first lines of memories in public GitHub repositories,\n"
              "# quoted for evaluation; each pair's `source` names file#memory (repository = the file name's\n"
              "# owner__repo, commit in ../shared/fixtures/SOURCES.tsv). The texts stay their authors'\n"
              "# (the repositories' licences apply); the labels, rules and variants are memdeck's (MIT).\n")
    sys.stdout.write(header + yaml.safe_dump({"pairs": pairs}, allow_unicode=True, sort_keys=False, width=120))


if __name__ == "__main__":
    main()
