"""Read commands of the CLI (agents, score, runs, demo): filled in by the read API issue."""

from __future__ import annotations

import argparse
from typing import Any

from collector.settings import Settings


def add_read_commands(sub: Any) -> None:
    del sub


def run_read_command(args: argparse.Namespace, settings: Settings) -> int:
    del args, settings
    return 2
