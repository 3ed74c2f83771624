"""The `memdeck` command line. It never imports Textual; only `memdeck` with no command (and
`memdeck demo`) start the app, and they import it when they run."""
