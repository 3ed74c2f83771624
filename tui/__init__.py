"""memdeck's face: the `memdeck` command line (`tui.cli`) and the Textual workbench (`tui.app`).

Nothing here imports Textual at package level: the command line must stay light, because
`memdeck prime` runs at every agent session start.
"""

# The store first, before any module here imports Peewee: it imports Peewee without psycopg
# (store/engine/peewee_import.py), which would otherwise cost every command 100 ms.
import store  # noqa: F401, E402
