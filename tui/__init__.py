"""memdeck's face: the `memdeck` command line (`tui.cli`) and the Textual workbench (`tui.app`).

Nothing here imports Textual at package level: the command line must stay light, because
`memdeck prime` runs at every agent session start.
"""
