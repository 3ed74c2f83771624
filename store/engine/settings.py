"""Every tunable memdeck has, one frozen dataclass per config section.

Each field's `doc` (its metadata) says what it does and where its value came from: a seed
(/work/shared/seeds: 000 to 004; where they disagree the choice is a policy here), a
measurement, or a fit on the eval sets (dev-retrieval, 17 queries; dev-retrieval-2, 60 queries;
docs/injection.md has the figures). `store.engine.config.Config` loads the YAML layers into
these and checks every value; `docs/settings.md` is generated from them
(`python -m store.engine.settings_reference > docs/settings.md`).

Field metadata: `doc`, and where they apply `key` (the YAML name, when it is no Python name),
`at_most` (the largest value; every number is 0 or more) and `choices` (the policies a text
setting may name). Lists are tuples, so a section can be shared; the mappings (`types.aliases`,
`hats.relations`, `confidence.initial`) are one value each and must not be changed in place.
"""

# No `from __future__ import annotations`: the loader reads each field's type from `Field.type`.

from dataclasses import dataclass

from store.engine.setting_fields import FRACTION, LARGEST_NUMBER, section, setting  # noqa: F401 (re-exported)
from store.engine.capture_settings import CaptureConfidence, CaptureSettings, IngestSettings  # noqa: F401 (re-exported)


@dataclass(frozen=True)
class TypesSettings:
    extra: tuple[str, ...] = setting((), "More memory types, beyond the built-in ones. Policy: none by default.")
    aliases: dict[str, str] = setting({}, "More words mapped to types, e.g. {gotchas: pitfall}; each must name "
                                          "a built-in type or one of `types.extra`. Policy: none by default.")
    fallback: str = setting("context", "Where a marker's unknown type goes (its word is kept as a tag). "
                                       "Policy: `context`, the most general built-in type.")


@dataclass(frozen=True)
class HatsSettings:
    extra: tuple[str, ...] = setting((), "More hats (agent roles), beyond explorer, planner, creator, critic, "
                                         "editor. Policy: none by default.")
    relations: dict[str, tuple[str, ...]] = setting(
        {"explorer": ("planner",), "planner": ("creator", "explorer"), "creator": ("critic", "editor", "planner"),
         "critic": ("creator", "editor"), "editor": ("creator", "critic")},
        "Which hats are related: a memory written under a related hat gets `injection.hat_related` of the "
        "same hat's boost. Seed 000's hat model (the roles that hand work to each other).")


@dataclass(frozen=True)
class ConfidenceSettings:
    initial: dict[str, float] = setting(
        {"explicit": 0.6, "automatic": 0.5, "imported": 0.7, "operator": 0.8},
        "Starting confidence by source (0 to 1 each); an unknown source starts as `explicit`. Seed 000; "
        "`operator` (typed by a person in the workbench) is a policy here.")
    max: float = setting(1.0, "Cap for reinforcement. Seed 001.", at_most=FRACTION)
    reinforce_boost: float = setting(0.1, "Added to the higher confidence of the two when a new memory reinforces "
                                          "an existing one. Seeds 001 and 003.", at_most=FRACTION)
    usage_boost: float = setting(0.02, "Added each time a memory is judged helpful (seed 000). Being injected counts a use and adds nothing (issue 40: one-off requests climbed to 0.91 on injections alone).",
                                 at_most=FRACTION)
    usage_max: float = setting(0.95, "Usage alone never lifts a memory above this. Seed 000.", at_most=FRACTION)
    superseded_to: float = setting(0.3, "An explicitly contradicted (superseded) memory drops to this, never "
                                        "raised by it. Seed 004.", at_most=FRACTION)
    contradiction_penalty: float = setting(
        0.2, "A memory judged wrong without a replacement loses this much; below `inactive_below` it becomes "
             "inactive, so two verdicts take a new memory out of use. Seed 001's contradiction.", at_most=FRACTION)
    inactive_below: float = setting(0.3, "Below this a memory becomes inactive: kept, visible, never injected. "
                                         "Seed 001.", at_most=FRACTION)


@dataclass(frozen=True)
class ReinforcementSettings:
    similarity: int = setting(90, "Above 100, nothing is compared on add: every add is a new memory. At or below, "
                                  "the sameness decision (section `sameness`) decides whether a new memory repeats, "
                                  "updates or contradicts one. Policy (seed 001 reinforces any memory of the same "
                                  "service and category, which merges distinct observations).")


@dataclass(frozen=True)
class SamenessSettings:
    """Same statement, update, contradiction or distinct (store/engine/sameness.py). The numbers
    were chosen on the tune half of tests/data/pairs/ralph-pairs.yaml by benchmarks/tune_sameness.py;
    docs/concepts.md gives the figures on the other half."""

    related: float = setting(0.4, "Overlap of subject words and specifics below which two texts are distinct. "
                                  "Fit on the pairs' tune half.", at_most=FRACTION)
    contradiction: float = setting(0.5, "Overlap at least this with opposite polarity: a contradiction. Fit on the "
                                        "pairs' tune half.", at_most=FRACTION)
    same: int = setting(75, "rapidfuzz token_sort_ratio of the stems at least this, nothing else differing: the same "
                            "statement (reinforced). Fit on the pairs' tune half.", at_most=100)
    sure_update: float = setting(0.8, "Overlap of subject words for an update to supersede without review. Fit on "
                                      "the pairs' tune half.", at_most=FRACTION)
    semantic_same: float = setting(0.8, "With vectors: a `same` below this cosine goes to review instead. Policy "
                                        "(the pairs measure the same with and without it).", at_most=FRACTION)
    max_change: float = setting(0.4, "More than this share of the words changed (and more than two): another "
                                     "statement, distinct. Fit on the pairs' tune half.", at_most=FRACTION)
    updates: str = setting("supersede", "`supersede`: a sure update supersedes at once (issue 27's \"changes become "
                                        "supersessions\"); `propose`: every update waits in the inbox. Policy.",
                           choices=("supersede", "propose"))


@dataclass(frozen=True)
class ConsolidateSettings:
    apply: bool = setting(False, "`memdeck consolidate` only proposes (false) or also applies what it is sure of. "
                                 "Policy: nothing changes without review.")


@dataclass(frozen=True)
class LinearDecay:
    idle_days: int = setting(7, "Days unused before linear decay starts. Seed 000.")
    per_week: float = setting(0.02, "Confidence lost per week after that. Seed 000.")
    floor: float = setting(0.1, "Linear decay never goes below this. Seed 000.")


@dataclass(frozen=True)
class GraceWeeklyDecay:
    grace_days: int = setting(30, "Days after the last update, use, verification or import with no decay. "
                                  "Seed 001 (Claude Ops).")
    per_week: float = setting(0.1, "Confidence lost per week after the grace period. Seed 001.")


@dataclass(frozen=True)
class ExponentialDecay:
    rate_per_day: float = setting(0.01, "confidence × e^(−rate × idle days). Seed 004 (an Ebbinghaus "
                                        "forgetting curve); a steeper rate is 0.1.")


@dataclass(frozen=True)
class DecaySettings:
    policy: str = setting("grace-weekly", "linear (seed 000) | grace-weekly (seed 001) | exponential (seed 004) | "
                                          "none. Policy: grace-weekly, which never fades a memory in its first month.",
                          choices=("linear", "grace-weekly", "exponential", "none"))
    clock: str = setting("sessions", "What a policy's days count. `calendar`: every day; `sessions`: the days one of "
                                     "the memory's project's sessions started (a project left for a month keeps its "
                                     "rules; a project with no sessions never decays). Chosen by leave-one-project-out "
                                     "on the replay sets (`memdeck eval-replay --folds project`): 2 of 3 folds chose "
                                     "`sessions` (docs/replay.md; `calendar` before).",
                         choices=("calendar", "sessions"))
    linear: LinearDecay = section(LinearDecay, "The `linear` policy's settings.")
    grace_weekly: GraceWeeklyDecay = section(GraceWeeklyDecay, "The `grace-weekly` policy's settings.",
                                             key="grace-weekly")
    exponential: ExponentialDecay = section(ExponentialDecay, "The `exponential` policy's settings.")

    def params(self, policy: str) -> dict[str, float]:
        """The settings of one decay policy, as the decay rules read them."""
        from dataclasses import asdict

        return asdict(getattr(self, policy.replace("-", "_")))


@dataclass(frozen=True)
class CleanupSettings:
    max_confidence: float = setting(0.15, "`memdeck cleanup` purges only memories that are inactive or in the "
                                          "trash, never used and below this confidence. Seed 000.", at_most=FRACTION)
    min_idle_days: int = setting(30, "... and unchanged for this many days. Seed 000.")


@dataclass(frozen=True)
class SearchSettings:
    title_weight: float = setting(4.0, "BM25 weight of the title in `memdeck search`. Policy: a title says what "
                                       "a memory is about.")
    content_weight: float = setting(1.0, "BM25 weight of the content in `memdeck search`. Policy.")
    tags_weight: float = setting(2.0, "BM25 weight of the tags in `memdeck search`. Policy.")
    fuzzy_min_score: int = setting(70, "rapidfuzz score (0-100) a title needs to be added as a typo match "
                                       "while the page has room. Policy.", at_most=100)


@dataclass(frozen=True)
class GateSettings:
    """The relevance gate (store/retrieval/gate.py). The task is about something here when its best
    cosine reaches `semantic_evidence` and its best word evidence reaches `word_evidence` (or a
    memory uses `word_share` of its specific words), or when its best cosine stands
    `semantic_alone` above the project's median cosine with the task. Each value's margins (the
    range over which both eval sets measure the same) are in docs/injection.md."""

    semantic_evidence: float = setting(
        0.12, "Best cosine (on the embedding model's own scale) that counts as evidence, with the words'. "
              "Fit: the middle of 0..0.141, the range over which dev-retrieval and dev-retrieval-2 measure the "
              "same (0.14 before sat 0.002 below ios-05's best cosine; commit 00541e1).", at_most=FRACTION)
    semantic_alone: float = setting(
        0.17, "Margin of the best cosine over the project's median cosine with the task at which meaning alone "
              "says the task is on topic. Fit on both eval sets: between cr-06 (0.159, weak) and oc-07 (0.178, on "
              "topic on it alone), 0.023 above the highest noise probe (0.147); 0.16 before (commit b73e068).",
        at_most=FRACTION)
    word_evidence: float = setting(
        1.1, "Not used by the gate since issue 25 (its words are judged against chance: `word_surprise`); "
             "kept so config files that set it stay valid. Was: word evidence (the task's specific words a memory uses, each at its rarity relative to a word "
             "found in one memory) that counts as evidence. Fit: the middle of 1.05-1.25, the range that "
             "measures the same on both eval sets (commit 71bc746); two-fold cross-validation "
             "(`memdeck eval --cross`) picks 1.1 or 1.5.", at_most=100)
    word_share: float = setting(
        0.5, "Or: a memory uses this share of the task's specific words, by rarity. Binds no task of the eval "
             "sets (0.2 .. above 1 measure the same): a policy for a project where every memory says what the "
             "task says.", at_most=FRACTION)
    weak: float = setting(
        0.3, "Below this share of the mark nothing is injected; between it and the mark only the best "
             "candidate, if short (`weak_budget`). Chosen by leave-one-project-out: 6 of 10 folds chose 0.3 from "
             "0.3/0.5 (docs/injection.md); 0.5 before.",
        at_most=FRACTION)
    weak_budget: float = setting(
        0.125, "Weak evidence: the best candidate goes in only if it takes at most this share of the budget. "
               "Measurement: a 1,875-token memory was most of the words-alone noise on dev-retrieval-2 "
               "(428 -> 53 tokens; commit 9b88dbb); 0.05 .. 0.5 measure the same.", at_most=FRACTION)
    fill: bool = setting(
        True, "On topic, the room the memories with evidence leave is filled with the remaining candidates "
              "(relevance 0), best score first and packed after all of them; a weak or unrelated task gets none. "
              "Measurement: budget recall on dev-retrieval-2 0.864 -> 0.886 at 2,000 tokens, noise unchanged "
              "(commit 62f81f8).")
    semantic_alone_size: int = setting(
        70, "`semantic_alone` holds in projects of up to this many memories; in a larger one of N the margin "
            "grows by sqrt(ln N / ln size), as chance's best cosine does (0: never grows). Fit: the eval sets' "
            "largest project has 69 memories; 15 .. any measure the same (commit 5a8e290).")
    word_surprise: float = setting(
        1.0, "How far the best memory's words must stand above chance in the project for the words to say the "
             "task is about it: -log10 of the memories expected to hold as much of the task's words by chance "
             "(store/retrieval/chance.py; 1.0: one in ten). Chosen by leave-one-project-out over the "
             "ten dev projects (`memdeck eval --folds project`, nearest the issue's goals: 10 of 10 folds chose 1.0 "
             "from 0.5/1.0; docs/injection.md).", at_most=6)
    floor: float = setting(
        0.0, "Per memory, on an on-topic task: a memory goes in only if its own evidence reaches this share of "
             "the task's mark (its words' surprise against `word_surprise`, or its share of the task's words "
             "against `word_share`, or its cosine's rise over the project's typical one against the semantic "
             "margin, or a path or tag naming it); at 0, every candidate that anything says is about the task "
             "(relevance above 0), within `most_memories`. Chosen by leave-one-project-out: 10 of 10 folds chose 0 "
             "from 0/0.3/0.5 once the block holds at most `most_memories` (docs/injection.md); 0.5 before, "
             "without the cap.", at_most=10)
    meaning_floor: float = setting(
        0.3, "Per memory, by meaning: a memory's cosine must rise over the project's typical cosine with the "
             "task by this share of the semantic margin (`semantic_alone`, grown with the project) to count as "
             "its own evidence (`floor` is the words'). Chosen by leave-one-project-out: 9 of 10 folds chose 0.3 "
             "from 0.3/0.6/1.0 (docs/injection.md), when `floor` was 0.5; it has no effect at `floor` 0.",
        at_most=10)
    fill_strength: float = setting(
        100.0, "Filler (`fill`) only when the task's evidence is at least this many times its mark: only when "
               "the gate is sure. Chosen by leave-one-project-out: 100 (no filler) over 2 in all 10 folds: filler "
               "cost block precision and cross-project silence more than it gained recall (docs/injection.md).",
        at_most=1000)
    full_strength: float = setting(
        8.0, "Spend in proportion to confidence: an on-topic task may use the whole budget only when its "
             "evidence is at least this many times its mark; from the mark (1) up to this, the share of the budget "
             "it may spend grows in proportion, from `least_share` (1: every on-topic task may use the whole "
             "budget). Chosen by leave-one-project-out: 9 of 10 folds chose 8 from 3/5/8, the grid's edge; an "
             "earlier grid of 1/3/5 chose 5 in 9 of 10 (docs/injection.md).", at_most=1000)
    least_share: float = setting(
        0.15, "... and never below this share of the budget (with 2,000 tokens: 300, two or three memories). "
              "Chosen by leave-one-project-out: 10 of 10 folds chose 0.15 from 0.1/0.15/0.3 (docs/injection.md).",
        at_most=FRACTION)
    most_memories: int = setting(
        8, "On topic, at most this many memories with evidence go in, best score first (critical ones and "
           "filler aside; 0: no cap). Below the first few, a memory with evidence is rarely one the task needs: "
           "on dev-retrieval-2 the block's 7th memory and later were labelled relevant 7% of the time, its first "
           "81%. Chosen by leave-one-project-out: 8 of 10 folds chose 8 from 6/8/0 (docs/injection.md).",
        at_most=1000)


@dataclass(frozen=True)
class InjectionWeights:
    """The score is the weighted sum of the signals (each 0..1). Text and semantic share the
    relevance of a memory's words; without the semantic extra, text has both weights."""

    text: float = setting(0.3, "BM25 relative to the task's best match, or the word share. Chosen with the "
                               "semantic signal (commit 963959b): text and semantic share 1.0.")
    semantic: float = setting(0.7, "Cosine with the task, from the project's median (0) to the best (1). Chosen "
                                   "with the semantic signal (commit 963959b).")
    path: float = setting(0.8, "A file ref covers a path in play, or the text names it. Seed 000's path-overlap "
                               "boost (+0.3), weighted up so a memory about the file at hand outranks a topical one: "
                               "policy (commit 32f985e).")
    tag: float = setting(0.3, "A tag the context names. Seed 000's tag-keyword boost (+0.15), weighted by policy "
                              "(commit 32f985e).")
    hat: float = setting(0.15, "Same hat 1, a related hat `hat_related`. Seed 000's hat boost (+0.25), weighted "
                               "by policy (commit 32f985e).")
    confidence: float = setting(0.15, "The memory's confidence. Seed 000 (confidence × 0.2), weighted by policy "
                                     "(commit 32f985e).", at_most=FRACTION)
    recency: float = setting(0.05, "Fades to nothing over `recency_days`. Seed 000's recency boost (0.1), "
                                   "weighted by policy (commit 32f985e).")
    critical: float = setting(0.5, "A critical memory (see `injection.critical`): seed 003 always surfaces them; "
                                  "the weight is policy (commit 32f985e).")


@dataclass(frozen=True)
class FieldWeights:
    """BM25 weight of each indexed field for injection. A title is most often the content's first
    sentence, so weighting it high counts those words twice over."""

    title: float = setting(1.0, "Title. Policy: equal weights (commit 24dd6b0).")
    content: float = setting(1.0, "Content. Policy: equal weights.")
    tags: float = setting(1.0, "Tags. Policy: equal weights.")
    words: float = setting(1.0, "Identifier words (camelCase, snake_case, paths split). Policy: equal weights.")


@dataclass(frozen=True)
class CriticalSettings:
    types: tuple[str, ...] = setting(("constraint", "architecture"), "Types that are always surfaced at high "
                                                                     "confidence. Seed 003.")
    min_confidence: float = setting(0.9, "... at or above this confidence. Seed 003.", at_most=FRACTION)
    limit: int = setting(5, "At most this many critical memories a block, the best first (a task's block; the "
                            "session start's is `session_start.limit`). Seed 003.")


@dataclass(frozen=True)
class SessionStartSettings:
    """What the session-start block holds beside the critical memories: the standing rules, the
    memories that say how work is done here whatever the task (issue 38: a rule the user taught
    once is there before they need to say it again)."""

    types: tuple[str, ...] = setting(("constraint", "convention"), "The types of standing rules, beside the "
                                                                   "critical types (`injection.critical.types`). "
                                                                   "Policy (the always-on types of issue 25).")
    min_confidence: float = setting(
        0.5, "The block holds them, and the critical types, at or above this confidence (or the critical one, if "
             "lower). Chosen by leave-one-project-out on the replay sets (`memdeck eval-replay --folds project`): 2 "
             "of 3 folds chose 0.5 from 0.5/0.6 in round 14 (3 of 3 from 0.5/0.6/0.9 in round 13; 0.9 was the bar "
             "before; docs/replay.md).", at_most=FRACTION)
    limit: int = setting(
        20, "At most this many memories a session-start block, most confident first, the most recently confirmed "
            "first among equals. Chosen as `min_confidence`: 3 of 3 folds chose 20 from 10/20 in round 14 (10 "
            "from 5/10 in round 13).")


@dataclass(frozen=True)
class CandidateSettings:
    """How many memories the SQL candidate searches hand to the scorer."""

    text: int = setting(60, "By full-text match. Set with the semantic signal (commit 963959b); checked: `memdeck "
                            "eval --losses` loses no relevant memory of dev-retrieval-2 to retrieval at 2,000 tokens.")
    semantic: int = setting(60, "By cosine with the task (the semantic extra). As `text` (commit 963959b).")
    path: int = setting(40, "By file refs covering a path in play. Policy (commit fefe1c1).")
    confident: int = setting(30, "The most confident of the project. Policy (commit 24dd6b0).")
    common_word: int = setting(1000, "Task words found in this many memories or more are not searched (they say "
                                     "little and cost much). Set for prime at scale, with its benchmark "
                                     "(commit fefe1c1).")
    unseen: int = setting(10, "A project's word statistics (rarity, and what chance gives) count this many more "
                              "memories, none holding the task's words: until a project has memories enough to "
                              "say what is common in it, a word its few memories hold is taken as rare, not as "
                              "found everywhere (a project of one memory holds every word it holds in 100% of its "
                              "memories). A prior, not fitted: see docs/injection.md for its figures.")


@dataclass(frozen=True)
class FeedbackLessonSettings:
    """What agents' `not_relevant` / `helpful` judgments teach prime (store/retrieval/judged.py)."""

    floor_gain: float = setting(
        0.0, "The project's learned floor: the relevance below which its memories (a task's candidates) were "
             "judged not relevant at least this many times more than helpful (each helpful one counting "
             "`floor_helpful`) is the bar for its memories on every task (critical ones excepted); 0: no floor. "
             "8 before (chosen at 500 tokens on dev-retrieval.yaml, commit 890f262). Chosen at 2,000 tokens over "
             "the ten projects of both eval sets (`python -m store.evaluation.feedback_folds`, docs/mcp.md): the "
             "most held-out precision for at most 0.02 budget recall lost; every floor tried (4 .. 64) loses "
             "more (8, on dev-retrieval / dev-retrieval-2: precision +0.32 / +0.31, budget recall -0.16 / -0.29).", at_most=LARGEST_NUMBER)
    words_floor_gain: float = setting(
        64.0, "`floor_gain` without the semantic signal (words alone). Chosen the same way with `--words-only` "
              "(with `floor_helpful` 30): held-out precision +0.025, budget recall -0.021 on dev-retrieval-2, "
              "nothing moves on dev-retrieval; leave-one-project-out +0.048 / -0.030 (docs/mcp.md).",
        at_most=LARGEST_NUMBER)
    floor_helpful: float = setting(
        30.0, "What one `helpful` judgment below a mark weighs against the `not_relevant` ones in the floor "
              "(`floor_gain`, `words_floor_gain`). 10 before (policy, commit 890f262); 30 chosen with "
              "`words_floor_gain` (docs/mcp.md): a memory an agent found helpful at a level is strong evidence "
              "that level is not noise.", at_most=LARGEST_NUMBER)
    similar_evidence: float = setting(
        0.1, "Tasks like the new one: a memory whose not_relevant judgments (those made when it had no lower "
             "relevance or cosine than it has now), each weighted by how much more similar its task is to the new "
             "one than the new task's median cosine with the project's judged tasks, less its helpful ones, reach "
             "this is left out; 0: off. With the semantic signal only: on words alone every value tried cost "
             "precision on dev-retrieval-2. Chosen as `floor_gain` (0.02 .. 0.4 tried); 0.1, on dev-retrieval / "
             "dev-retrieval-2: held-out precision +0.009 / +0.015, budget recall -0.005 / -0.016 (docs/mcp.md).",
        at_most=LARGEST_NUMBER)
    similar_helpful: float = setting(
        1.0, "What one helpful judgment weighs against a not_relevant one in `similar_evidence`. Policy.",
        at_most=LARGEST_NUMBER)
    opened_weight: float = setting(
        0.0, "Opening is a use (issue 39): an agent that opens (MCP `get`) a memory a prime of its session listed "
             "wanted it for that prime's task (kept in its meta as `opened`, an `opened` event; its confidence does "
             "not move); the opening weighs this much of a helpful judgment in `similar_evidence` and the floor. "
             "0: kept, not weighed. Off: chosen by leave-one-project-out (`python -m "
             "store.evaluation.feedback_folds --openings both|alone`, index on, 0.25 .. 1 tried), no value moved a "
             "held-out figure (docs/injection.md, Opening is a use).", at_most=1.0)
    unopened_weight: float = setting(
        0.0, "A line of the index that an agent that opens memories left unopened until the session's next prime "
             "(or its end) weighs this much of a not_relevant judgment in `similar_evidence`, once the memory has "
             "`unopened_after` of them; 0: kept, not weighed. Off: chosen as `opened_weight` (0.1 .. 1 tried); "
             "held out it gained nothing on dev-retrieval-2 and cost dev-retrieval reachable recall (0.867 -> "
             "0.802 with verdicts) (docs/injection.md).", at_most=1.0)
    unopened_after: int = setting(
        2, "How many unopened listings (one a session) a memory needs before they count (`unopened_weight`): "
           "one unopened line may be an agent in a hurry. Policy; 1 .. 3 tried with `unopened_weight`.", at_most=20)


@dataclass(frozen=True)
class InjectionSettings:
    budget: int = setting(2000, "Tokens of the injected block. Seed 001 (a 2,000-token budget); the eval's "
                                 "figures are at 2,000.")
    prompt_budget: int = setting(
        600, "Tokens of the block the user-prompt-submit hook adds "
             "for one prompt: a prompt is one step, and the memories it needs are few. Policy from issue 25 "
             "(\"about 600 tokens\").")
    session_budget: int = setting(
        2000, "Tokens of the session-start block, which holds only always-on memories (critical ones, and the "
              "standing rules: `session_start`) and is not counted as a use. Chosen by leave-one-project-out on "
              "the replay sets: 3 of 3 folds chose 2,000 from 1,000/2,000 in round 14 (1,000 in round 13 from "
              "500/1,000; 500 before, a policy of issue 25; docs/replay.md).")
    index_lines: int = setting(
        0, "On an on-topic task, up to this many more memories with evidence that the block left out (below the "
           "cap, over the budget) follow it as one line each (id, type, title), which the agent opens when it "
           "wants one; 0: no index. Issue 39 (progressive disclosure: a line costs ~15 tokens, a memory ~120). "
           "Off by default, by measurement: at 10, held out (`--folds project`), reachable recall rose 0.53 -> 0.63 on "
           "dev-retrieval-2 but cross-project probes rose 120 -> 152 tokens and 0.9% -> 4.6% over 500, past "
           "the goals (docs/injection.md, 'The index').")
    index_budget: int = setting(
        150, "Tokens of the index after the block, heading included, at most what the block leaves of the budget. "
             "Policy from issue 39 (an index budget of 150 tokens). Counted in what a prime says it injects.")
    long_memory: int = setting(
        5, "A memory longer than this many typical ones (the median length of those that passed the gate) is "
           "packed after the others, so one outsized memory does not crowd out several. Measurement: 3 .. 8 "
           "measure the same on both eval sets; budget recall on dev-retrieval-2 0.849 -> 0.864 (commit cdc14a5).")
    grouping: str = setting("type", "type (seed 000) | scope (seed 001's grouping by service).",
                            choices=("type", "scope"))
    heading: str = setting("Project Memory", "The block's heading. Seed 003 ('## Project Memory (from previous "
                                            "sessions)').")
    confidence_floor: float = setting(0.3, "Below this a memory is never injected. Seeds 000 (confidence > 0.3) "
                                          "and 001 (inactive below 0.3).",
                                      at_most=FRACTION)
    gate: GateSettings = section(GateSettings, "The relevance gate.")
    semantic: bool = setting(True, "The semantic signal (the `memdeck[semantic]` extra): off, or on when "
                                   "installed. Policy.")
    generic_words: tuple[str, ...] = setting(
        ("fix", "add", "implement", "update", "make", "refactor", "plan", "review", "investigate"),
        "Task verbs that say nothing about what a task is about, in any of their forms: the usual ones, and those "
        "that only say which hat is at work. Measurement: 'fix it' injected a log whose only shared word was "
        "'fixed' (commits 963959b, 7920a78).")
    untargeted: str = setting(
        "trusted", "With no task, paths or tags (a cold session start): `trusted` fills the budget with the most "
                   "trusted memories for the hat (seed 001 injects by confidence at every session start); "
                   "`critical` injects only critical ones.", choices=("trusted", "critical"))
    weights: InjectionWeights = section(InjectionWeights, "The weight of each ranking signal.")
    hat_related: float = setting(0.4, "A related hat's share of the same hat's boost. Seed 000 (0.1 / 0.25).")
    recency_days: int = setting(50, "The recency boost fades to nothing over this many days. Seed 000 "
                                    "(0.1 - 0.002 a day).")
    field_weights: FieldWeights = section(FieldWeights, "BM25 weights of the indexed fields for injection.")
    critical: CriticalSettings = section(CriticalSettings, "Critical memories, always surfaced (seed 003).")
    session_start: SessionStartSettings = section(SessionStartSettings, "The standing rules of the session-start "
                                                                        "block.")
    candidates: CandidateSettings = section(CandidateSettings, "How many candidates each search hands on.")
    feedback: FeedbackLessonSettings = section(FeedbackLessonSettings, "What agents' not_relevant and helpful "
                                                                       "judgments teach prime.")


@dataclass(frozen=True)
class AnchorsSettings:
    stale: str = setting(
        "leave-out", "A memory whose anchored code changed or went missing is not injected as fact: `leave-out` "
                     "leaves it out with the reason; `flag` injects those at or above `flag_min_confidence` with "
                     "'(verify: PATH changed)'. Policy.")
    flag_min_confidence: float = setting(0.8, "See `stale: flag`. Policy.", at_most=FRACTION)
    ingest_recent_edits: int = setting(3, "Ingest anchors a marker's memory to the files the session edited within "
                                          "this many tool results before it (0: none). Policy.")


@dataclass(frozen=True)
class SessionsSettings:
    idle_minutes: int = setting(30, "A session without an end in its transcript ends this long after its last "
                                    "activity. Policy.")
    feedback_limit: int = setting(20, "An agent session's verdicts (MCP `feedback`) beyond this many are recorded but "
                                      "held for review (a burst of feedback never retires memories on its own). "
                                      "Policy.")
    hook_server_minutes: int = setting(10, "The hook server (`memdeck hook serve`, docs/agents.md): the session-start "
                                           "hook starts one for the store when none runs, and the prompt and "
                                           "session-start hooks ask that warm process instead of loading memdeck each "
                                           "time; it exits after this many minutes without a request. 0: none is "
                                           "started. Only your own config sets it. Policy.", at_most=1440)


@dataclass(frozen=True)
class TeamSettings:
    author: str = setting("", "Who the events of this store name as having made each change (a team store on "
                              "PostgreSQL is written by many people); empty: the operating system's user name. In a team store "
                              "(`memdeck team init`, docs/team.md) PostgreSQL records the database user instead. "
                              "Also whose `personal` memories `prime` injects. Policy.")
    db: str = setting("", "The team store read beside your own (docs/team.md): a PostgreSQL URL "
                          "(postgresql://user@host/database). Empty: your own store alone. From a repository's "
                          "`.memdeck.yml` only a URL without parameters that name files (passfile, sslkey, service...) "
                          "is taken. Writes (add, captured candidates, an agent's remember) stay in your own store; "
                          "`memdeck share` copies to this one. Policy.")
    servers: str = setting("", "The servers a repository's `.memdeck.yml` may name as its team store (`team.db`), "
                               "`host` or `host:port` (5432 when none), separated by spaces or commas. Empty: a "
                               "repository's team.db is not connected to (your own config's team.db always is). Only "
                               "your own config sets it. Policy.")
    file: str = setting(".memdeck/team.yaml", "The repository's read-only team file, read as the layer `file` when it "
                                              "exists: a path inside the project root, a `.yaml` file (docs/team.md) "
                                              "or a Ralph markdown file (`.md`). `memdeck share --to-file` appends "
                                              "to the YAML one. Empty: no file layer. Policy.")


@dataclass(frozen=True)
class InteropSettings:
    max_import_mb: int = setting(256, "Files larger than this are refused before they are parsed. Policy.")
    max_memory_chars: int = setting(200000, "An imported memory longer than this fails the import. Policy.")
    agents_md_limit: int = setting(20, "Memories in the managed block of CLAUDE.md / AGENTS.md. Policy.")
