from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.harness import Collector, running_collector


@pytest.fixture
def collector(tmp_path: Path, database_url: str) -> Iterator[Collector]:
    with running_collector(tmp_path, database_url=database_url) as running:
        yield running
