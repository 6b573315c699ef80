"""The junior plugin: ``junior slack serve`` and ``junior slack socket``. It registers no sources."""

from __future__ import annotations

from typing import TYPE_CHECKING

from junior_core import hookimpl

if TYPE_CHECKING:
    import click

__all__ = ["SlackPlugin"]


class SlackPlugin:
    """Adds the ``junior slack`` commands; the Slack app itself is ``junior_slack.create_app``."""

    junior_plugin_name = "slack"

    @hookimpl
    def register_commands(self, cli: click.Group) -> None:
        from junior_slack.cli import slack_group

        cli.add_command(slack_group)
