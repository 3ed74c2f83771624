"""The workbench's screens, one module each."""
