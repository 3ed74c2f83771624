"""memdeck's face: the `memdeck` command line (`tui.cli`) and the Textual workbench (`tui.app`).

Nothing here imports Textual, nor the store: the command line must stay light, because a hook
runs at every prompt, and a prompt hook the hook server answers imports nothing of the store
(`tui/cli/hook_wire.py`). A module here that imports Peewee itself imports the store first: the
store imports Peewee without psycopg (store/engine/peewee_import.py), which would otherwise cost
every command 100 ms.
"""
