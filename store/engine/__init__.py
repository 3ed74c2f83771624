"""The engine: the Store and its records, schema and migrations, the lifecycle rules, settings, and the truthful errors."""
