"""Model clients and the agent loop: optional, outside the framework core (``junior-core[openai]``, ``[anthropic]``)."""
