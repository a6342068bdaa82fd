"""The `demo-agent` subcommand's flags, wired into the CLI by collector.cli.

Only argparse here: building the CLI's parser must not import uvicorn and
the OpenTelemetry SDK for every other command. `run_demo_agent` imports
the server when it runs.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Final

from collector.demo_agent.variants import VARIANTS

DEFAULT_URL: Final = "http://127.0.0.1:4318"  # as `screen`'s: a collector of `make run`
DEFAULT_PORT: Final = 8000


def add_demo_agent_command(sub: Any) -> None:
    p = sub.add_parser(
        "demo-agent",
        help="serve a small scripted agent to screen (POST /run), traced to the collector",
        description="Variants: "
        + "; ".join(f"{v.name}: {v.what}" for v in VARIANTS.values())
        + ". Try it: badge-collector screen concierge --suite examples/concierge.yaml "
        "--endpoint http://127.0.0.1:8000/run",
    )
    # dest is not `host`: the CLI reads `args.host` as the collector's BADGE_HOST setting
    p.add_argument("--host", dest="agent_host", default="127.0.0.1", help="address (127.0.0.1)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help="0 picks a free port (8000)")
    p.add_argument("--variant", choices=sorted(VARIANTS), default="baseline")
    p.add_argument("--url", default=None, help=f"the collector (BADGE_URL, else {DEFAULT_URL})")
    p.add_argument("--key", default=None, help="ingest key for the agent's spans (BADGE_KEY)")


def run_demo_agent(args: argparse.Namespace) -> int:
    """Serve until interrupted; 2 when the port cannot be bound."""
    from collector.demo_agent.server import serve

    url = args.url or os.environ.get("BADGE_URL") or DEFAULT_URL
    key = args.key or os.environ.get("BADGE_KEY") or None
    if key is None:
        print("note: no --key or BADGE_KEY: spans go without one (--insecure)", file=sys.stderr)
    return serve(args.agent_host, args.port, VARIANTS[args.variant], url, key)
