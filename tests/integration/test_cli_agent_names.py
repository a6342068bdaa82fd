"""The read commands find an agent by name within one owner (docs/api.md "The
read commands"): names are unique per owner only, so a name two owners use
needs `--owner` (or the id), from the database and over `--url` alike."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.support.otlp import agent_run
from bench.support.servers import cli
from tests.integration.harness import Collector, running_collector, wait_for


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Collector, dict[str, str]]]:
    """Owners `owner-a` and `owner-b` each have an agent named `twin`; only
    `owner-b` has `loner`."""
    path = Path(tmp_path_factory.mktemp("twins"))
    with running_collector(path) as c:
        other = c.service.keys.create("owner-b")
        for key in (c.key, other):
            assert c.post(agent_run("t1", service="twin").SerializeToString(), key=key).is_success
        assert c.post(agent_run("t1", service="loner").SerializeToString(), key=other).is_success
        c.settle()
        wait_for(lambda: c.query("SELECT count(*) FROM agent_board")[0][0] == 3)
        ids = dict(c.query("SELECT owner, id FROM agents WHERE name = 'twin'"))
        yield c, ids


def sources(c: Collector) -> list[list[str]]:
    return [["--url", c.http_url], ["--database-url", c.service.settings.database_url]]


def test_a_name_two_owners_use_is_refused_with_the_candidates(
    twins: tuple[Collector, dict[str, str]],
) -> None:
    c, ids = twins
    for source in sources(c):
        for command in (["score", "twin"], ["runs", "twin"], ["diagnose", "twin"]):
            refused = cli(*command, *source, check=False)
            assert refused.returncode == 2, refused.stdout
            assert refused.stdout == ""
            assert "2 agents are named 'twin'; name one with --owner" in refused.stderr
            for owner, ident in sorted(ids.items()):
                assert f"owner {owner!r}  id {ident}" in refused.stderr
        compared = cli("compare", "twin", *source, check=False)
        assert compared.returncode == 2 and "2 agents are named 'twin'" in compared.stderr


def test_owner_picks_one_of_them_and_an_id_needs_no_owner(
    twins: tuple[Collector, dict[str, str]],
) -> None:
    c, ids = twins
    for source in sources(c):
        for owner in ("owner-a", "owner-b"):
            runs = cli("runs", "twin", "--owner", owner, *source)
            assert len(runs.stdout.splitlines()) == 2  # header and the one run
            assert cli("runs", ids[owner], *source).stdout == runs.stdout
        assert cli("score", "loner", *source).returncode == 0  # one owner: no --owner needed
        missing = cli("score", "loner", "--owner", "owner-a", *source, check=False)
        assert missing.returncode == 1
        assert "no agent named 'loner' of owner 'owner-a'" in missing.stderr
        wrong = cli("score", ids["owner-a"], "--owner", "owner-b", *source, check=False)
        assert wrong.returncode == 1 and "of owner 'owner-b'" in wrong.stderr
