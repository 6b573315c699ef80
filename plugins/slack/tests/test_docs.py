"""docs/slack.md and README say what the app does: every setting, exactly the manifest's scopes, the Slack section."""

from __future__ import annotations

import re
from itertools import takewhile
from pathlib import Path

from junior_slack.cli import SETTINGS
from slack_helpers import manifest, manifest_scopes

ROOT = Path(__file__).resolve().parents[3]
GUIDE = (ROOT / "docs" / "slack.md").read_text()
README = (ROOT / "README.md").read_text()


def table_rows(text: str, heading: str) -> list[str]:
    """The body rows of the first table after ``heading`` (its header and rule left out)."""
    lines = text.split(heading, 1)[1].splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("|"))
    return list(takewhile(lambda line: line.startswith("|"), lines[first:]))[2:]


def test_the_guide_names_every_setting_the_commands_read() -> None:
    rows = table_rows(GUIDE, "`serve` listens on")
    named = {m for row in rows for m in re.findall(r"^\| `([A-Z_]+)`", row)}
    assert named == {*SETTINGS, "SLACK_API_URL", "JUNIOR_MEMORY_URL", "JUNIOR_SLACK_URL", "JUNIOR_SLACK_PROMPTS",
                     "SLACK_REDIRECT_URI"}


def test_the_guide_lists_exactly_the_manifest_scopes_and_events() -> None:
    rows = table_rows(GUIDE, "The manifest asks for these scopes")
    listed = {s for row in rows for s in re.findall(r"`([a-z_]+(?::[a-z]+)?)`", row.split("|")[1])}
    assert listed == manifest_scopes()
    events = manifest()["settings"]["event_subscriptions"]["bot_events"]
    assert all(f"`{event}`" in GUIDE for event in events) and len(events) == 4


def test_readme_opens_with_the_two_commands_and_runs_it_on_slack_after_the_tour() -> None:
    first_screen = README.splitlines()[:15]
    commands = [line.split()[0:2] for line in first_screen if line.startswith("make ")]
    assert commands == [["make", "demo"], ["make", "test"]]
    sections = re.findall(r"^## (.+)$", README, flags=re.M)
    assert sections[sections.index("A short tour") + 1] == "Run it on Slack"
    slack = README.split("## Run it on Slack", 1)[1].split("\n## ", 1)[0]
    assert "junior slack serve" in slack and "plugins/slack/manifest.yml" in slack and "docs/slack.md" in slack
    assert "`openai-compatible:<base_url>#<model>`, e.g. `openai-compatible:http://127.0.0.1:8080/v1#model`" in README


def test_the_testing_modules_scopes_are_the_manifests_and_each_public_name_is_in_the_guide() -> None:
    import junior_slack.testing as testing

    assert testing.MANIFEST_SCOPES == manifest_scopes()
    section = GUIDE.split("## Try it without Slack", 1)[1].split("\n## ", 1)[0]
    assert [name for name in testing.__all__ if f"`{name}" not in section] == []
