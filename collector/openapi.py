"""Write or check the committed `openapi.json` (make check fails when stale).

python -m collector.openapi openapi.json          # write
python -m collector.openapi --check openapi.json  # compare
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from api.app import create_api


class _Unused:
    """The schema does not depend on a store; nothing here is ever called."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"openapi generation touched the store ({name})")


def render() -> str:
    unused = _Unused()
    app = create_api(
        unused,
        unused,
        weights=unused,
        grades=unused,
        plans=unused,
        agent_writes=unused,
        certificate_reads=unused,
        certificates=unused,
        metrics=lambda: b"",
    )
    return json.dumps(app.openapi(), indent=2, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("path", type=Path)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    current = render()
    if args.check:
        if not args.path.exists() or args.path.read_text() != current:
            print(
                f"{args.path} is stale: run `python -m collector.openapi {args.path}`",
                file=sys.stderr,
            )
            return 1
        return 0
    args.path.write_text(current)
    return 0


if __name__ == "__main__":
    sys.exit(main())
