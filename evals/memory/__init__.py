"""Memory suites: workflows (one actor) and provenance (several actors)."""
