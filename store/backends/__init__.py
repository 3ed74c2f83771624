"""The database back-ends: SQLite and PostgreSQL behind one interface."""
