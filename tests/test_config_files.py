"""Where junior.toml is found, ``[plugins.<name>]`` settings, and sources the host hides."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from junior_core import Runtime
from junior_core._base.config import ConfigError, config_path, plugin_settings
from tests.helpers import notes_plugin, weather_plugin


def test_the_user_config_file_is_the_fallback(tmp_path: Path) -> None:
    user_dir, here = tmp_path / "user", tmp_path / "here"
    user_dir.mkdir()
    here.mkdir()
    env = {"JUNIOR_CONFIG_DIR": str(user_dir)}
    assert config_path(env, cwd=here) is None
    (user_dir / "junior.toml").write_text("")
    assert config_path(env, cwd=here) == user_dir / "junior.toml"
    (here / "junior.toml").write_text("")
    assert config_path(env, cwd=here) == here / "junior.toml"
    named = tmp_path / "named.toml"
    assert config_path({**env, "JUNIOR_CONFIG": str(named)}, cwd=here) == named


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG_CONFIG_HOME is how platformdirs reads it on Linux")
def test_the_platformdirs_user_config_dir_without_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "junior").mkdir()
    (tmp_path / "junior" / "junior.toml").write_text("")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("JUNIOR_CONFIG_DIR", raising=False)
    monkeypatch.delenv("JUNIOR_CONFIG", raising=False)
    assert config_path(cwd=tmp_path / "nowhere") == tmp_path / "junior" / "junior.toml"


def test_plugin_settings_expand_variables(tmp_path: Path) -> None:
    path = tmp_path / "junior.toml"
    path.write_text('[plugins.calc]\nurl = "db://${CALC_USER}@host/${CALC_DB}"\nlimit = 3\n'
                    'nested = { key = "${CALC_DB}" }\nnames = ["${CALC_USER}", "plain"]\n'
                    '[plugins.other]\nx = 1\n')
    env = {"CALC_USER": "ann", "CALC_DB": "main", "JUNIOR_CONFIG": str(path)}
    assert plugin_settings("calc", env) == {
        "url": "db://ann@host/main", "limit": 3, "nested": {"key": "main"}, "names": ["ann", "plain"],
    }
    assert plugin_settings("absent", env) == {}
    assert plugin_settings("calc", {"JUNIOR_CONFIG_DIR": str(tmp_path / "none")}) == {} or Path.cwd().joinpath(
        "junior.toml").is_file()
    with pytest.raises(ConfigError, match=r"junior.toml: \[plugins.calc\] url: refers to \$\{CALC_DB\}, "
                                          "which is not set"):
        plugin_settings("calc", {"CALC_USER": "ann", "JUNIOR_CONFIG": str(path)})
    path.write_text("[plugins]\ncalc = 3\n")
    with pytest.raises(ConfigError, match=r"\[plugins.calc\] must be a table"):
        plugin_settings("calc", env)


def test_memory_reads_its_url_from_its_plugin_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from junior_memory.config import resolve_timeout, resolve_url

    path = tmp_path / "junior.toml"
    path.write_text('[plugins.memory]\nurl = "sqlite:///${MEM_DIR}/m.sqlite3"\ntimeout_s = 7\n')
    monkeypatch.setenv("JUNIOR_CONFIG", str(path))
    monkeypatch.setenv("MEM_DIR", str(tmp_path))
    monkeypatch.delenv("JUNIOR_MEMORY_URL", raising=False)
    monkeypatch.delenv("JUNIOR_MEMORY_TIMEOUT", raising=False)
    assert resolve_url() == f"sqlite:///{tmp_path}/m.sqlite3"
    assert resolve_timeout() == 7.0
    monkeypatch.setenv("JUNIOR_MEMORY_URL", "sqlite:///elsewhere.sqlite3")
    assert resolve_url() == "sqlite:///elsewhere.sqlite3"  # the variable wins


@pytest.mark.parametrize("rule", ["weather", "weather__*"])
def test_a_source_the_host_hides_is_not_advertised(rule: str) -> None:
    with Runtime(plugins=[notes_plugin(), weather_plugin()], exposure={rule: "hidden"}, config=False,
                 index_cache=False) as rt:
        description = rt.model_tools()[0]["description"]
        assert "- notes:" in description and "weather" not in description
        listed = rt.search_tools()
        assert [s["id"] for s in listed["sources"]] == ["notes"]
        inside = rt.search_tools("forecast", source="weather")
        assert inside["tools"] == [] and [s["id"] for s in inside["sources"]] == ["notes"]
    with Runtime(plugins=[notes_plugin(), weather_plugin()], config=False, index_cache=False) as rt:
        assert "- weather:" in rt.model_tools()[0]["description"]  # the control: shown without the rule
