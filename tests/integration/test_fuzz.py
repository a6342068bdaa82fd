"""The fuzzer in CI: every input that ever failed, and a fresh slice of new ones.

`make fuzz` (bench/fuzz.py) sends a million inputs per door; here each door
gets FUZZ_INPUTS of them (about half a minute), from a new seed each run
(FUZZ_SEED to repeat one), against a real server process on each database.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator

import pytest

from bench.support.fuzzing import FuzzClient, Tally, Target, fuzz, keep, kept_cases
from bench.support.servers import ServerProcess, cli, start_server

FUZZ_INPUTS = int(os.environ.get("FUZZ_INPUTS", "4000"))


@pytest.fixture(scope="module")
def target(module_database_url: str) -> Iterator[tuple[Target, ServerProcess]]:
    key = cli("keys", "create", "--owner", "fuzz", "--database-url", module_database_url)
    server = start_server(module_database_url)
    try:
        yield Target(server.http_port, server.grpc_port, key.stdout.strip()), server
    finally:
        server.stop()


def test_every_kept_failure_now_gets_a_documented_answer(
    target: tuple[Target, ServerProcess],
) -> None:
    cases = kept_cases()
    assert len(cases) >= 2  # the ones bench/fuzz.py found (docs/reliability.md)
    client = FuzzClient(target[0])
    try:
        failures = [(case, client.send(case).failure) for case in cases]
    finally:
        client.close()
    assert [why for _, why in failures if why] == []
    assert target[1].proc.poll() is None


@pytest.mark.parametrize("door", ["http", "grpc"])
def test_a_slice_of_new_inputs_gets_only_documented_answers(
    target: tuple[Target, ServerProcess], door: str
) -> None:
    seed = int(os.environ.get("FUZZ_SEED", random.randrange(1, 2**31)))
    tally: Tally = fuzz(target[0], door, seed=seed, count=FUZZ_INPUTS, workers=2, seconds=300)
    kept = keep(tally.failures)  # so a failure found here stays a regression case
    assert tally.failed == 0, (seed, [why for _, why in tally.failures][:5], kept)
    assert tally.inputs == FUZZ_INPUTS
    assert target[1].proc.poll() is None, "the server died"
    # both kinds of answer were exercised, not only refusals
    assert tally.answers[f"{door} {'200' if door == 'http' else 'OK'}"] > 0
