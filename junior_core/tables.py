"""The table printer of ``junior`` commands, for plugins' commands too: aligned columns under a header rule."""

from __future__ import annotations

from collections.abc import Sequence

import click

from junior_core.text import clip

__all__ = ["print_table"]


def print_table(rows: Sequence[Sequence[str]], headers: Sequence[str], max_width: int | None = 60) -> None:
    """Print ``rows`` as aligned columns under ``headers``; cells past ``max_width`` end in '...'."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=False)]
    if max_width is not None:
        widths = [min(width, max_width) for width in widths]
    for i, row in enumerate([headers, *rows]):
        cells = [clip(str(cell), widths[j]) for j, cell in enumerate(row)]
        click.echo("  ".join(cell.ljust(widths[j]) for j, cell in enumerate(cells)).rstrip())
        if i == 0:
            click.echo("  ".join("-" * width for width in widths))
