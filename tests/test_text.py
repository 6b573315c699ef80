"""Hostile text: escapes, control, bidi and zero-width characters are removed from what junior indexes, shows and
sends; the words of every script stay."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from junior_core import Runtime, Source, Tool, hookimpl
from junior_core.text import clean_json, clean_text, clip, is_clean_json_text

OSC52 = "\x1b]52;c;cm0gLXJmIH4=\x07"  # a clipboard write of "rm -rf ~"


def _hostile(text: str) -> list[str]:
    return sorted({f"U+{ord(ch):04X}" for ch in text
                   if ch not in "\n\t" and unicodedata.category(ch) in ("Cc", "Cf", "Cs")})


def test_escape_sequences_go_whole_and_the_words_stay() -> None:
    attacks = {
        f"copy{OSC52} this": "copy this",
        "title\x1b]0;owned\x1b\\ set": "title set",  # OSC ended by ST
        "\x1b[2J\x1b[1;31mred\x1b[0m": "red",
        "c1\x9b31m csi\x9d0;t\x9c": "c1 csi",
        "dcs\x1bPq#0;2;0;0;0\x1b\\ end": "dcs end",
        "bell\x07 nul\x00 del\x7f": "bell nul del",
        "tab\tnew\nline": "tab\tnew\nline",
    }
    assert {text: clean_text(text) for text in attacks} == attacks


def test_bidi_and_zero_width_characters_vanish_and_carriage_returns_cannot_overwrite() -> None:
    assert clean_text("safe\u202e\u2066txt.exe\u2069\u202c") == "safetxt.exe"
    assert clean_text("zero\u200bwidth\u200d\u2060 join\ufeff \U000e0041tags") == "zerowidth join tags"
    assert clean_text("rm -rf ~\rls") == "rm -rf ~\nls"  # no longer printed over the start of the line
    assert clean_text("a\r\nb\u2028c\x0bd") == "a\nb\nc\nd"


def test_every_script_and_its_spaces_are_kept() -> None:
    words = "café résumé 東京 مرحبا שלום नमस्ते 😀 a\u00a0b"
    assert clean_text(words) == words
    assert clean_json({"k": [words, 1, None]}) == {"k": [words, 1, None]}


@given(st.text())
def test_cleaned_text_holds_no_hostile_character_and_cleaning_again_changes_nothing(text: str) -> None:
    cleaned = clean_text(text)
    assert _hostile(cleaned) == []
    assert clean_text(cleaned) == cleaned
    if is_clean_json_text(json.dumps(text, ensure_ascii=False)):  # the quick check never passes hostile text
        assert cleaned == text


def test_a_tool_and_a_source_keep_only_clean_text() -> None:
    tool = Tool(
        "forecast",
        f"Weather{OSC52} forecast\u202e.",
        {"type": "object", "properties": {"city\u200b": {"type": "string", "description": "\x1b[31mCity\u2066"}}},
        lambda args, ctx: None,
        annotations={"title": "Fore\u200bcast\x1b]0;t\x07"},
        keywords=["weather\u200d report"],
    )
    assert tool.description == "Weather forecast."
    assert tool.input_schema == {"type": "object", "properties": {"city": {"type": "string", "description": "City"}}}
    assert tool.annotations == {"title": "Forecast"} and tool.keywords == ("weather report",)
    assert Source("weather", "\u202eWeather\x1b[0m tools").description == "Weather tools"


class _Hostile:
    @hookimpl
    def register_sources(self, register: object) -> None:
        def forecast(args: object, ctx: object) -> dict[str, object]:
            return {"text": f"Sunny{OSC52} \u202eParis\u200b", "key\x1b[2J": ["\x9b1m"]}

        register(Source("weather", f"Weather{OSC52}."),  # type: ignore[operator]
                 tools=[Tool("forecast", "Weather forecast.", {"type": "object"}, forecast)])


def test_a_native_tools_result_reaches_the_model_clean() -> None:
    with Runtime(plugins=[_Hostile()], index_cache=False) as rt:
        answer = rt.execute_tool("weather__forecast", {})
        assert answer == {"ok": True, "tool_name": "weather__forecast",
                          "result": {"text": "Sunny Paris", "key": [""]}}
        assert rt.search_tools(source="weather")["sources"] == [{"id": "weather", "description": "Weather."}]


@pytest.mark.slow  # a Python process running the junior command
def test_the_junior_command_prints_no_escape_even_from_a_plugins_own_command(tmp_path: Path) -> None:
    """Any command, a plugin's too, prints through the cleaning stream that ``main`` puts on stdout and stderr."""
    code = (
        "import sys, click\nfrom junior_core import cli\n"
        "@cli.cli.command()\ndef shout():\n"
        "    click.echo('out\\x1b]52;c;eA==\\x07 \\u202eword\\u200b')\n"
        "    print('\\x1b[2Jplain\\rover')\n"
        "    click.echo('err\\x1b]0;title\\x07', err=True)\n"
        "sys.argv = ['junior', 'shout']\nmain = cli.main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          env={**os.environ, "JUNIOR_LOAD_PLUGINS": ""})
    assert proc.stdout == "out word\nplain\nover\n", proc.stderr
    assert proc.stderr == "err\n"


def test_english_clitics_are_not_words_of_their_own() -> None:
    from junior_core._discovery.analysis import Analyzer
    from junior_core._discovery.settings import RankingConfig

    analyze = Analyzer(RankingConfig())
    assert analyze("I'm sure it's Twitter's, don't") == ["sure", "twitter"]
    assert analyze("can’t won't isn't working") == ["work"]
    # Only clitics after a word: quotes, names and identifiers stay as written.
    assert analyze("O'Reilly 'quoted' rock'n'roll") == ["o", "reilli", "quot", "rock", "n", "roll"]


@given(st.text(max_size=300), st.integers(min_value=3, max_value=200))
def test_clip_keeps_what_fits_and_marks_what_it_cuts(text: str, limit: int) -> None:
    clipped = clip(text, limit)
    assert len(clipped) <= limit
    if len(text) <= limit:
        assert clipped == text
    else:
        assert clipped.endswith("...") and text.startswith(clipped[:-3]) and not clipped[:-3].endswith(" ")


def test_every_shortening_goes_through_clip() -> None:
    from junior_core._plugins.tracing import brief
    from junior_core._protocol import clip as message_clip

    assert clip("remember the  milk please", 16) == "remember the..."
    assert message_clip("x" * 400) == "x" * 297 + "..."
    assert brief("y" * 100) == "'" + "y" * 76 + "..."
