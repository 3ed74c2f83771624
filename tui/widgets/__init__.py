"""The workbench's panes, one module each."""
