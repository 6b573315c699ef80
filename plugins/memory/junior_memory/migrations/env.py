"""Alembic environment: runs on the connection the store hands over (see ``MemoryStore.migrate``)."""

from __future__ import annotations

from alembic import context

from junior_memory.engine import VERSION_TABLE
from junior_memory.tables import Base, include_object

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("junior-memory migrations run through `junior memory migrate` or MemoryStore.migrate()")

context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    version_table=VERSION_TABLE,
    include_object=include_object(connection.dialect.name),
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
