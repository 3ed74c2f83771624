"""A session in Spanish is read like one in English (issue 28): the forms people correct an agent
with, their rules and the agent's agreement, each beside its English twin, which was already read.
Every message here is in the test's own words."""

from __future__ import annotations

import pytest

from store.browse.search import MemoryFilter, list_memories
from store.capture.ingest import ingest_file
from tests.transcript_support import Conversation


def _one_exchange(store, tmp_path, words: str, reply: str, stopped: bool = False):
    talk = Conversation("idioma")
    talk.said("Agrega la validación al formulario de alta de clientes.")
    talk.replied("Empiezo por el esquema del formulario.")
    talk.called("Edit", file_path="/home/dev/app/src/alta.ts", old_string="a", new_string="b")
    talk.answered("The file was updated.")
    if stopped:
        talk.stopped()
    said = talk.said(words)
    talk.replied(reply)
    ingest_file(store, talk.write(tmp_path / "idioma.jsonl"))
    found = list_memories(store, MemoryFilter(statuses=("pending",)), sort="created", limit=None)
    assert all(m.meta["evidence"][0]["line"] == said for m in found)
    return [(m.type, m.title) for m in found]


SPANISH = [
    # "avoid …" after a stop: a rule (not a fact because "usa" is in it)
    ("evita los any en los DTO, usa tipos concretos", "Entendido, cambio los tipos.", True,
     ("convention", "Evita los any en los DTO, usa tipos concretos")),
    # "you haven't updated X" → "Update X" (the infinitive, as Spanish states a rule)
    ("no has actualizado las migraciones, hazlo siempre al cambiar el esquema", "Tienes razón, las actualizo.", True,
     ("convention", "Actualizar las migraciones, hazlo siempre al cambiar el esquema")),
    # "stop creating X" → "No crear X"
    ("deja de duplicar los validadores, impórtalos de shared/", "Buen punto, los importo de shared/.", False,
     ("convention", "No duplicar los validadores, impórtalos de shared/")),
    # "don't ever again …"
    ("no vuelvas a subir los .env al repositorio", "Entendido.", False,
     ("convention", "No vuelvas a subir los .env al repositorio")),
    # "X has to be Y"
    ("las fechas de la API tienen que ir en UTC", "De acuerdo.", False,
     ("convention", "Las fechas de la API tienen que ir en UTC")),
    # "you forgot to X" → "X", a pitfall
    ("te olvidaste de regenerar el cliente de la API", "Perdón, lo regenero.", False,
     ("pitfall", "Regenerar el cliente de la API")),
    # a fact the agent owns: "es cierto" is its agreement
    ("la base de staging se borra cada domingo", "Es cierto, eso explica las filas que faltan.", False,
     ("context", "La base de staging se borra cada domingo")),
]


@pytest.mark.parametrize("words, reply, stopped, expected", SPANISH, ids=[s[0][:30] for s in SPANISH])
def test_a_spanish_lesson_is_read_like_its_english_twin(store, tmp_path, words, reply, stopped, expected):
    assert _one_exchange(store, tmp_path, words, reply, stopped) == [expected]


@pytest.mark.parametrize("words, reply", [
    ("vale, sigue", "Sigo con el formulario."),
    ("ahora corre los tests otra vez", "Los corro."),
    ("¿dónde se guarda la configuración del formulario?", "En src/config/alta.ts."),
    ("no sé, mira tú qué es mejor", "Miro las opciones."),
    ("hay que terminar el formulario hoy", "De acuerdo."),  # tied to today: the task in hand
])
def test_spanish_chatter_questions_and_instructions_about_the_task_are_no_lessons(store, tmp_path, words, reply):
    assert _one_exchange(store, tmp_path, words, reply) == []
