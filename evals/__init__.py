"""Agent-facing evals of junior: memory workflows, provenance and discovery, each with negative controls."""
