"""Lifecycle rules over time, with a frozen clock: the three decay policies, protected memories,
the usage boost and its cap, contradiction, and cleanup of memories already out of use.

The policies' arithmetic is tested on the calendar clock (`decay.clock: calendar`: every day
counts), where the days are the test's own; the default clock (`sessions`: the days the project
was worked on) has tests of its own below, and counts a day worked as a calendar day."""

from __future__ import annotations

import math

import pytest

from store import Config, FrozenClock, Store
from store.engine.errors import ConfigError
from store.engine.lifecycle import MIN_STEP, WorkDays, plan_cleanup, run_cleanup, run_decay
from tests.data_support import T0

pytestmark = pytest.mark.both_backends


def config_with(**sections) -> Config:
    return Config.defaults().with_overrides({"decay": {"clock": "calendar"}}, "test").with_overrides(sections, "test")


@pytest.fixture(autouse=True)
def calendar_days(request):
    """The module's `store` decays on the calendar clock (see the docstring)."""
    if "store" in request.fixturenames:
        store = request.getfixturevalue("store")
        store.config = store.config.with_overrides({"decay": {"clock": "calendar"}}, "test")


def open_store(path, clock, config=None) -> Store:
    return Store.open(path, project="demo", clock=clock, config=config or Config.defaults())


def kinds(store, memory_id):
    return [e.kind for e in store.events(memory_id)]


# -- seed 001: a 30-day grace period, then 0.1 a week (the default policy) ----------------------

def test_grace_weekly_leaves_a_memory_alone_during_the_grace_period(store, clock):
    memory = store.add("Jellyfin takes 60s to start", type="timing", confidence=0.7).memory
    clock.advance(days=30)
    assert run_decay(store) == []
    assert store.get(memory.id).confidence == 0.7


def test_grace_weekly_after_60_unused_days_gives_seed_001s_confidence_and_inactive(store, clock):
    memory = store.add("Jellyfin takes 60s to start", type="timing", confidence=0.7).memory
    clock.advance(days=60)
    changes = run_decay(store)
    expected = 0.7 - (30 / 7) * 0.1  # seed 001: 0.1 a week for the 30 days past the grace period
    decayed = store.get(memory.id)
    assert decayed.confidence == pytest.approx(expected, abs=1e-6)
    assert decayed.confidence == pytest.approx(0.271, abs=1e-3)
    assert decayed.status == "inactive"  # below confidence.inactive_below (0.3)
    assert [c.memory_id for c in changes] == [memory.id]
    event = store.events(memory.id)[-1]
    assert (event.kind, event.confidence_before, event.actor) == ("decayed", 0.7, "decay")
    assert event.confidence_after == pytest.approx(expected, abs=1e-6)
    assert event.detail == {"policy": "grace-weekly", "status": "inactive"}


def test_decay_dry_run_reports_without_writing(store, clock):
    memory = store.add("Jellyfin takes 60s to start", type="timing", confidence=0.7).memory
    clock.advance(days=60)
    planned = run_decay(store, dry_run=True)
    assert planned[0].confidence_after == pytest.approx(0.271, abs=1e-3)
    assert store.get(memory.id).confidence == 0.7
    assert kinds(store, memory.id) == ["created"]


def test_using_a_memory_restarts_its_grace_period(store, clock):
    memory = store.add("Sonarr needs a restart after upgrades", type="behavior", confidence=0.7).memory
    clock.advance(days=25)
    store.record_usage([memory.id])
    clock.advance(days=25)
    assert run_decay(store) == []


@pytest.mark.parametrize("policy, sections", [
    ("grace-weekly", {}),
    ("linear", {"decay": {"policy": "linear"}}),
    ("exponential", {"decay": {"policy": "exponential"}}),
])
def test_decay_run_daily_for_60_days_equals_decay_run_once(tmp_path, policy, sections):
    """Decay is applied from where it was last applied, so its schedule does not matter (up to
    MIN_STEP: a smaller step waits for the next run instead of filling the history)."""
    results = []
    for name, step in (("daily", 1), ("once", 60)):
        clock = FrozenClock(T0)
        with open_store(tmp_path / f"{name}.db", clock, config_with(**sections)) as store:
            memory = store.add("Radarr imports stall when the disk is full", type="pitfall",
                               confidence=0.7).memory
            for _ in range(0, 60, step):
                clock.advance(days=step)
                run_decay(store)
            results.append(store.get(memory.id))
    daily, once = results
    assert daily.confidence == pytest.approx(once.confidence, abs=MIN_STEP)
    assert daily.status == once.status
    assert once.confidence < 0.7


# -- seed 000: linear after idle days, with a floor -----------------------------------------------

def test_linear_loses_per_week_after_the_idle_days(store, clock):
    store.config = store.config.with_overrides({"decay": {"policy": "linear"}})
    memory = store.add("Use the repository pattern for DB access", type="pattern").memory  # 0.6
    clock.advance(days=7)
    assert run_decay(store) == []
    clock.advance(days=14)  # two weeks past the 7 idle days
    run_decay(store)
    assert store.get(memory.id).confidence == pytest.approx(0.6 - 2 * 0.02, abs=1e-6)


def test_linear_never_goes_below_its_floor(store, clock):
    store.config = store.config.with_overrides({"decay": {"policy": "linear"}})
    memory = store.add("Use the repository pattern for DB access", type="pattern").memory
    clock.advance(days=1000)
    run_decay(store)
    assert store.get(memory.id).confidence == pytest.approx(0.1)
    clock.advance(days=1000)
    assert run_decay(store) == []


# -- seed 004: exponential per day since last use ------------------------------------------------

def test_exponential_multiplies_by_exp_of_rate_times_idle_days(store, clock):
    store.config = store.config.with_overrides({"decay": {"policy": "exponential", "exponential": {"rate_per_day": 0.05}}})
    memory = store.add("The user prefers short answers", type="preference", confidence=0.9).memory
    clock.advance(days=10)
    run_decay(store)
    assert store.get(memory.id).confidence == pytest.approx(0.9 * math.exp(-0.5), abs=1e-6)


def test_policy_none_keeps_every_confidence(store, clock):
    store.config = store.config.with_overrides({"decay": {"policy": "none"}})
    memory = store.add("The user prefers short answers", type="preference").memory
    clock.advance(days=3650)
    assert run_decay(store) == []
    assert store.get(memory.id).confidence == 0.6


@pytest.mark.parametrize("policy", ["grace-weekly", "linear", "exponential"])
def test_protected_memories_never_decay(store, clock, policy):
    store.config = store.config.with_overrides({"decay": {"policy": policy}})
    memory = store.add("Never force-push to main", type="constraint", confidence=0.7).memory
    store.edit(memory.id, protected=True)
    clock.advance(days=400)
    assert run_decay(store) == []
    assert store.get(memory.id).confidence == 0.7
    assert "decayed" not in kinds(store, memory.id)


def test_deleted_and_pending_memories_do_not_decay(store, clock):
    trashed = store.add("An old note about the build", type="context", confidence=0.7).memory
    store.trash.delete([trashed.id])
    pending = store.add("A candidate awaiting review", type="context", confidence=0.7,
                        status="pending").memory
    clock.advance(days=400)
    assert run_decay(store) == []
    assert store.get(trashed.id).confidence == store.get(pending.id).confidence == 0.7


def test_inactive_memories_keep_decaying_toward_cleanup(store, clock):
    memory = store.add("Jellyfin takes 60s to start", type="timing", confidence=0.7).memory
    clock.advance(days=60)
    run_decay(store)
    clock.advance(days=14)
    run_decay(store)
    later = store.get(memory.id)
    assert later.status == "inactive"
    assert later.confidence == pytest.approx(0.7 - (44 / 7) * 0.1, abs=1e-6)


def test_decay_only_touches_the_current_project_unless_asked(store, clock):
    here = store.add("Jellyfin takes 60s to start", type="timing", confidence=0.7).memory
    there = store.add("Plex takes 30s to start", type="timing", confidence=0.7, project="other").memory
    clock.advance(days=60)
    assert [c.memory_id for c in run_decay(store)] == [here.id]
    assert [c.memory_id for c in run_decay(store, all_projects=True)] == [there.id]


# -- decay.clock: the days a project was worked on ------------------------------------------------

def _worked(store, clock, days, project=None):
    """A session of the project started on each of `days` (days after now)."""
    start = clock.now()
    for day in days:
        store.sessions.ensure(f"s-{project or 'here'}-{day}", project=project, started_at=start + day * 86400)


def test_work_days_count_the_days_a_session_started_after_the_first_up_to_the_last():
    day = 86400.0
    work = WorkDays([T0 + 1 * day, T0 + 1 * day + 60, T0 + 5 * day, T0 + 40 * day])
    assert work.between(T0, T0 + 5 * day) == 2  # days 1 and 5; two sessions on day 1 are one day
    assert work.between(T0 + 1 * day, T0 + 100 * day) == 2  # the start's own day is not counted
    assert work.between(T0 + 6 * day, T0 + 30 * day) == 0
    assert work.between(T0 + 9 * day, T0 + 2 * day) == 0


def test_on_the_sessions_clock_a_project_left_alone_keeps_its_rules(store, clock):
    """Calendar decay makes a rule inactive after a two-month pause; counted in the days the
    project was worked on, three days have passed."""
    memory = store.add("Never change the public routes", type="constraint", confidence=0.7).memory
    _worked(store, clock, [1, 2, 3])
    clock.advance(days=90)
    assert [c.memory_id for c in run_decay(store, dry_run=True)] == [memory.id]  # the calendar's
    store.config = store.config.with_overrides({"decay": {"clock": "sessions"}})
    assert run_decay(store) == []
    assert store.get(memory.id).status == "active"


def test_on_the_sessions_clock_a_day_worked_counts_as_a_calendar_day(store, clock):
    memory = store.add("Jellyfin takes 60s to start", type="timing", confidence=0.7).memory
    _worked(store, clock, range(1, 61))
    clock.advance(days=60)
    store.config = store.config.with_overrides({"decay": {"clock": "sessions"}})
    run_decay(store)
    assert store.get(memory.id).confidence == pytest.approx(0.7 - (30 / 7) * 0.1, abs=1e-6)


def test_on_the_sessions_clock_a_project_without_sessions_never_decays(store, clock):
    store.config = store.config.with_overrides({"decay": {"clock": "sessions"}})
    store.add("Plex takes 30s to start", type="timing", confidence=0.7, project="other")
    _worked(store, clock, range(1, 61), project="other")
    memory = store.add("Jellyfin takes 60s to start", type="timing", confidence=0.7).memory
    clock.advance(days=60)
    assert [c.memory_id for c in run_decay(store, all_projects=True)] != []  # the other project's
    assert store.get(memory.id).confidence == 0.7


def test_an_unknown_decay_clock_is_a_config_error():
    with pytest.raises(ConfigError, match="decay.clock must be one of calendar, sessions"):
        config_with(decay={"clock": "lunar"})


# -- seed 000: the usage boost -------------------------------------------------------------------

def test_usage_boost_adds_a_little_confidence_and_counts_the_use(store, clock):
    memory = store.add("Run migrations before tests", type="convention").memory  # 0.6
    clock.advance(days=1)
    used = store.record_usage([memory.id], session_id="s-1")[0]
    assert used.confidence == pytest.approx(0.62)
    assert used.use_count == 1
    assert used.last_used_at == clock.now()
    event = store.events(memory.id)[-1]
    assert (event.kind, event.confidence_before, event.session_id) == ("used", 0.6, "s-1")
    assert event.confidence_after == pytest.approx(0.62)


def test_usage_boost_stops_at_its_cap_and_never_lowers(store):
    near = store.add("Run migrations before tests", type="convention", confidence=0.94).memory
    above = store.add("Pin the Postgres image tag", type="dependency", confidence=0.99).memory
    store.record_usage([near.id, above.id])
    assert store.get(near.id).confidence == pytest.approx(0.95)
    store.record_usage([near.id])
    assert store.get(near.id).confidence == pytest.approx(0.95)
    assert store.get(above.id).confidence == 0.99
    assert store.get(above.id).use_count == 1


# -- seed 000: cleanup, only from inactive and the trash -----------------------------------------

def low_memory(store, text, status="active", confidence=0.1):
    memory = store.add(text, type="context", confidence=confidence).memory
    if status != "active":
        store.edit(memory.id, status=status)
    return memory


def test_cleanup_purges_long_inactive_never_used_low_memories(store, clock):
    inactive = low_memory(store, "An inactive note nobody used", "inactive")
    trashed = low_memory(store, "A trashed note nobody used", "deleted")
    active = low_memory(store, "An active low note still in use")
    used = low_memory(store, "An inactive note used once", "inactive")
    store.record_usage([used.id])
    store.edit(used.id, confidence=0.1)
    protected = low_memory(store, "A protected inactive note", "inactive")
    store.edit(protected.id, protected=True)
    higher = low_memory(store, "An inactive note above the cleanup line", "inactive", confidence=0.2)
    clock.advance(days=29)
    assert plan_cleanup(store) == []  # not idle long enough yet
    clock.advance(days=2)
    purged = run_cleanup(store)
    assert sorted(m.id for m in purged) == sorted([inactive.id, trashed.id])
    survivors = {m.id for m in store.get_many([active.id, used.id, protected.id, higher.id])}
    assert survivors == {active.id, used.id, protected.id, higher.id}
    assert store.events(inactive.id) == []  # its history goes with it


def test_cleanup_dry_run_writes_nothing(store, clock):
    victim = low_memory(store, "An inactive note nobody used", "inactive")
    clock.advance(days=31)
    def changes():  # this connection's writes, and every commit
        return store.backend.own_changes(), store.data_version()

    version = changes()
    assert [m.id for m in run_cleanup(store, dry_run=True)] == [victim.id]
    assert changes() == version
    assert store.get(victim.id).status == "inactive"


def test_a_decayed_memory_ends_in_cleanup_under_the_default_policy(store, clock):
    memory = store.add("Jellyfin takes 60s to start", type="timing", confidence=0.7).memory
    clock.advance(days=60)
    run_decay(store)  # inactive at 0.27
    clock.advance(days=31)
    run_decay(store)  # below cleanup's 0.15
    assert store.get(memory.id).confidence < 0.15
    assert [m.id for m in run_cleanup(store)] == [memory.id]


# -- contradiction: a memory judged wrong ---------------------------------------------------------

def test_a_contradiction_lowers_by_the_penalty_and_never_below_zero(db_path, clock):
    from store.engine.lifecycle import contradict

    with open_store(db_path, clock, config_with(confidence={"contradiction_penalty": 0.5})) as store:
        memory = store.add("The cache TTL is 5 minutes", type="context", confidence=0.7).memory
        once = contradict(store, memory.id, actor="mcp", session_id="s1", detail={"verdict": "wrong"})
        twice = contradict(store, memory.id, actor="mcp")
        events = [e for e in store.events(memory.id) if e.kind == "contradicted"]
    assert (once.confidence, once.status) == (pytest.approx(0.2), "inactive")
    assert (twice.confidence, twice.status) == (0.0, "inactive")  # inactive stays inactive
    assert events[0].session_id == "s1" and events[0].detail == {"verdict": "wrong", "status": "inactive"}
    assert events[1].detail == {}


def test_memdeck_show_prints_a_verdicts_note_as_text(run_cli, db_path, clock):
    from store.engine.feedback import give_feedback

    with open_store(db_path, clock) as store:
        memory = store.add("Deploy with fabric", type="decision").memory
        give_feedback(store, memory.id, "wrong", note="moved to CI \x1b[31mred")
    shown = run_cli("show", memory.id, check=True).stdout
    assert "contradicted" in shown and "(wrong: moved to CI \\x1b[31mred)" in shown
