"""Personal memories: about the person, not a project ("reply in chat, not in files", "prefer small
commits"), added with `--scope personal` in any project and injected in every project, ranked
and gated as the project's own memories are (docs/team.md).

They are the memories of scope `personal` whose owner is this store's author (config
`team.author`, else the local user; in a team store the database user), so in a store several
people share nobody is handed another's. Read through the partial index `memory_personal`
(migration 12); their cosine with the task is read from their own project's vectors.
"""

from __future__ import annotations

PERSONAL_SCOPE = "personal"


def personal_ids(store, project_id: int, limit: int) -> list[str]:
    """The ids of this person's active personal memories kept in other projects, most confident
    first (those of `project_id` are its candidates already)."""
    if limit <= 0:
        return []
    return store.backend.memory_table.personal_ids(PERSONAL_SCOPE, store.author, project_id, limit)


def personal_cosines(store, task: str, ids: list[str]) -> dict[str, float]:
    """The cosine of each of these personal memories with the task, read from the vectors of the
    project each is kept in (vectors are packed per project)."""
    from store.retrieval.semantic import similar

    if not ids:
        return {}
    by_project: dict[int, list[str]] = {}
    for memory_id, project_id in store.backend.memory_table.project_ids(ids):
        by_project.setdefault(project_id, []).append(memory_id)
    found: dict[str, float] = {}
    for project_id, members in by_project.items():
        found.update(similar(store, project_id, task, len(members), members).cosines)
    return found
