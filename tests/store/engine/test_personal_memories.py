"""Personal memories (`--scope personal`): about the person, injected in every project, ranked
as the project's own; another person's are never handed to you."""

from __future__ import annotations

import pytest

from store import Config, Store
from store.engine.records import InjectionContext
from store.retrieval.injection import prime

pytestmark = pytest.mark.both_backends


PROJECT_MEMORIES = (
    "The {project} build runs on Node 20 with pnpm",
    "Deploys of {project} go out on Tuesdays after the release review",
    "The {project} staging database is reset every night at 2am",
    "Feature flags of {project} live in config/flags.yml",
    "The {project} CI caches node_modules by the lockfile hash",
)


def _as(name: str) -> Config:
    return Config.defaults().with_overrides({"team.author": name})


def test_a_personal_memory_is_injected_in_two_other_projects(db_path, clock):
    with Store.open(db_path, project="api", config=_as("ana"), clock=clock) as store:
        mine = store.add("Reply in chat, never write answers into files", type="preference",
                         scope="personal").memory.id
        project_only = store.add("The api listens on port 8080", type="context").memory.id
    for project in ("web", "docs-site"):
        with Store.open(db_path, project=project, config=_as("ana"), clock=clock) as store:
            for text in PROJECT_MEMORIES:
                store.add(text.format(project=project), type="context")
            result = prime(store, InjectionContext(task="should I write my answers into files or reply in chat"))
            included = {r.memory.id for r in result.included}
            assert mine in included, [(r.memory.title, r.reason) for r in result.excluded]
            assert project_only not in included and project_only not in {r.memory.id for r in result.excluded}
            assert "Reply in chat" in result.block
            # Ranked as the project's own: first, on the evidence of the task (not as filler).
            assert [r.memory.id for r in result.included if not r.filler][0] == mine


def test_another_persons_personal_memory_is_not_handed_to_you(db_path, clock):
    with Store.open(db_path, project="api", config=_as("bo"), clock=clock) as store:
        theirs = store.add("Reply in chat, never write answers into files", type="preference",
                           scope="personal").memory.id
    with Store.open(db_path, project="web", config=_as("ana"), clock=clock) as store:
        result = prime(store, InjectionContext(task="should I write my answers into files or reply in chat"))
        assert theirs not in {r.memory.id for r in [*result.included, *result.excluded]}
    with Store.open(db_path, project="web", config=_as("bo"), clock=clock) as store:
        result = prime(store, InjectionContext(task="should I write my answers into files or reply in chat"))
        assert theirs in {r.memory.id for r in result.included}


def test_a_personal_memory_in_the_trash_or_inactive_is_not_injected(db_path, clock):
    with Store.open(db_path, project="api", config=_as("ana"), clock=clock) as store:
        mine = store.add("Reply in chat, never write answers into files", type="preference",
                         scope="personal").memory.id
        store.trash.delete([mine])
    with Store.open(db_path, project="web", config=_as("ana"), clock=clock) as store:
        result = prime(store, InjectionContext(task="should I write my answers into files or reply in chat"))
        assert mine not in {r.memory.id for r in [*result.included, *result.excluded]}
