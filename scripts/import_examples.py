"""Copy the spec's worked examples into tests/data/examples in the project's own format.

Usage: python scripts/import_examples.py [SPEC_EXAMPLES_DIR]   (default ../shared/spec/examples)
Figures carry over (ids, inputs, expected values, tolerances); the spec's prose does not.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEST = ROOT / "tests" / "data" / "examples"


def convert(record: dict) -> dict:
    tol = record.get("test_rel_tol") or {}
    return {
        "id": record["id"],
        "section": record["section"],
        "kind": record.get("kind", "computed"),
        "inputs": record.get("inputs", {}),
        "expected": record.get("recomputed", {}),
        "tol": tol,
    }


def part_name(path: Path) -> str:
    return path.stem.removeprefix("examples-")


def main(argv: list[str]) -> int:
    src = Path(argv[1]) if len(argv) > 1 else ROOT.parent / "shared" / "spec" / "examples"
    DEST.mkdir(parents=True, exist_ok=True)
    for path in sorted(src.glob("examples-*.json")):
        records = [convert(r) for r in json.loads(path.read_text(encoding="utf-8"))]
        out = DEST / f"{part_name(path)}.json"
        out.write_text(json.dumps(records, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"{out.relative_to(ROOT)}: {len(records)} records")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
