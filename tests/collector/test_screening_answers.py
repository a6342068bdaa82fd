"""The screener's pure parts: reading answers, run keys, flags, texts cut to the value limit."""

from __future__ import annotations

import argparse
import io
import json
import math
from datetime import UTC, datetime
from pathlib import Path

import pytest

from collector.screening.answers import (
    MAX_BODY_BYTES,
    Answer,
    raised,
    read_http_answer,
    read_result,
)
from collector.screening.command import add_screen_command
from collector.screening.http_target import baggage_value, public_url
from collector.screening.options import Options, check_options, parse_header
from collector.screening.plan import SCREENING_ID, Screening, new_screening_id, round_dispatches
from collector.screening.progress import Bar, RoundLines, progress_for, round_line
from collector.screening.recorder import VALUE_LIMIT_BYTES, cut
from collector.screening.screener import Outcome
from collector.screening.suite import load_suite


def body(document: object) -> bytes:
    return json.dumps(document).encode()


def test_a_well_shaped_answer_keeps_its_valid_counts_and_cost() -> None:
    answer = read_http_answer(
        200,
        body({"output": "hi", "input_tokens": 3, "output_tokens": 4, "total_cost_usd": 0.5}),
        too_big=False,
    )
    assert answer == Answer(
        "none",
        output="hi",
        input_tokens=3,
        output_tokens=4,
        cost_usd=0.5,
        http_status=200,
        body=answer.body,
    )
    assert answer.run_status == "completed"


@pytest.mark.parametrize(
    "counts",
    [
        {"input_tokens": -1, "output_tokens": True, "total_cost_usd": "1"},
        {"input_tokens": 2**63, "output_tokens": 1.5, "total_cost_usd": -0.1},
        {"input_tokens": None, "output_tokens": "3", "total_cost_usd": 10**400},
        {"input_tokens": [], "output_tokens": {}, "total_cost_usd": True},
    ],
)
def test_invalid_counts_and_costs_are_evidence_not_figures(counts: dict[str, object]) -> None:
    answer = read_http_answer(200, body({"output": "x", **counts}), too_big=False)
    assert answer.error_class == "none"
    assert (answer.input_tokens, answer.output_tokens, answer.cost_usd) == (None, None, None)
    assert answer.body is not None and "output" in answer.body


def test_an_integer_of_thousands_of_digits_is_ignored_and_the_answer_still_read() -> None:
    text = b'{"output": "x", "input_tokens": ' + b"9" * 5000 + b', "output_tokens": 2}'
    answer = read_http_answer(200, text, too_big=False)
    assert (answer.error_class, answer.output) == ("none", "x")
    assert (answer.input_tokens, answer.output_tokens) == (None, 2)


def test_the_ends_of_the_ranges_are_kept() -> None:
    """SCREEN.md section 3: tokens 0..2^63-1 and any finite cost >= 0."""
    text = body(
        {"output": "x", "input_tokens": 2**63 - 1, "output_tokens": 0, "total_cost_usd": 1e308}
    )
    answer = read_http_answer(200, text, too_big=False)
    assert (answer.input_tokens, answer.output_tokens, answer.cost_usd) == (2**63 - 1, 0, 1e308)


def test_a_non_finite_cost_is_ignored() -> None:
    answer = read_http_answer(200, b'{"output": "x", "total_cost_usd": NaN}', too_big=False)
    assert answer.cost_usd is None
    assert read_result({"output": "x", "total_cost_usd": math.inf}).cost_usd is None
    assert read_result({"output": "x", "total_cost_usd": 0}).cost_usd == 0.0


@pytest.mark.parametrize(
    ("status", "content", "too_big", "expected"),
    [
        (500, body({"output": "x"}), False, "http_error"),
        (302, b"", False, "http_error"),
        (500, b"x" * 10, True, "http_error"),  # the status comes first in the table
        (200, b'{"output": "x"', True, "bad_response_shape"),
        (200, b"<html>", False, "bad_response_shape"),
        (200, b"[1, 2]", False, "bad_response_shape"),
        (200, body({"answer": "x"}), False, "bad_response_shape"),
        (200, body({"output": 42}), False, "bad_response_shape"),
        (200, b"[" * 100_000, False, "bad_response_shape"),
        (204, body({"output": ""}), False, "none"),
    ],
)
def test_the_first_class_that_applies_wins(
    status: int, content: bytes, too_big: bool, expected: str
) -> None:
    answer = read_http_answer(status, content, too_big=too_big)
    assert answer.error_class == expected
    assert answer.run_status == "completed"
    assert answer.http_status == status


def test_a_body_that_is_not_utf8_is_kept_as_replaced_text() -> None:
    answer = read_http_answer(200, b"\xff\xfe{", too_big=False)
    assert answer.error_class == "bad_response_shape"
    assert answer.body == "\ufffd\ufffd{"


def test_callable_results_strings_dicts_and_anything_else() -> None:
    assert read_result("plain") == Answer("none", output="plain", body="plain")
    shaped = read_result({"output": "o", "input_tokens": 5})
    assert (shaped.error_class, shaped.output, shaped.input_tokens) == ("none", "o", 5)
    assert read_result(None).error_class == "bad_response_shape"
    assert read_result({"output": None}).detail == "output is not a string"
    weird = read_result({"output": object()})
    assert weird.error_class == "bad_response_shape" and weird.body
    looped: list[object] = []
    looped.append(looped)
    assert read_result(looped).error_class == "bad_response_shape"


def test_an_exception_keeps_its_type_message_and_traceback() -> None:
    try:
        raise KeyError("refund")
    except KeyError as exc:
        answer = raised(exc)
    assert (answer.error_class, answer.exception_type, answer.detail) == (
        "exception",
        "KeyError",
        "'refund'",
    )
    assert answer.stacktrace is not None and "raise KeyError" in answer.stacktrace
    assert answer.run_status == "completed"


def test_timeouts_and_broken_connections_record_their_run_status() -> None:
    assert Answer("timeout").run_status == "timeout"
    assert Answer("connection_error").run_status == "failed"
    assert MAX_BODY_BYTES == 1024 * 1024


def test_cut_keeps_whole_characters_within_the_collector_limit() -> None:
    assert cut("abc") == "abc"
    assert cut("a" * 20_000) == "a" * VALUE_LIMIT_BYTES
    cut_text = cut("é" * 10_000)
    assert len(cut_text.encode()) <= VALUE_LIMIT_BYTES and set(cut_text) == {"é"}
    assert cut("x\ud800y") == "x?y"  # a lone surrogate cannot cross the wire as UTF-8


def test_urls_lose_userinfo_and_query_and_baggage_is_percent_encoded() -> None:
    assert public_url("https://user:pw@agent.example:8443/run?token=s#f") == (
        "https://agent.example:8443/run"
    )
    assert public_url("http://[::1]:9/x") == "http://[::1]:9/x"
    assert baggage_value("refund me/2,ok=yes;é") == "refund%20me%2F2%2Cok%3Dyes%3B%C3%A9"


def suite_file(tmp_path: Path, tasks: list[dict[str, object]], **extra: object) -> Path:
    path = tmp_path / "suite.json"
    path.write_text(json.dumps({"name": "s", "tasks": tasks, **extra}))
    return path


def test_dispatches_carry_the_run_key_and_only_the_fields_given(tmp_path: Path) -> None:
    suite = load_suite(
        suite_file(
            tmp_path,
            [
                {"id": "a b", "prompt": "p", "expected_output": {"k": 1}, "metadata": {"m": 1}},
                {"id": "c", "prompt": "q", "max_tokens": 9},
            ],
            send_expected=True,
        )
    )
    screening = Screening("S-1", "bot", None, suite, 2)
    first, second = round_dispatches(screening, 2)
    assert first.run_key == "S-1/a b/2" and first.round == 2
    assert json.loads(first.body) == {
        "task_id": "a b",
        "prompt": "p",
        "max_tokens": 256,
        "metadata": {"m": 1},
        "expected_output": {"k": 1},
    }
    assert json.loads(second.body) == {"task_id": "c", "prompt": "q", "max_tokens": 9}


def test_screening_ids_default_to_utc_time_and_six_hex() -> None:
    made = new_screening_id(datetime(2026, 11, 2, 3, 4, 5, tzinfo=UTC))
    assert made.startswith("20261102T030405Z-") and len(made) == 23
    assert SCREENING_ID.match(made) and SCREENING_ID.match(new_screening_id())
    assert not SCREENING_ID.match("a/b") and not SCREENING_ID.match("x" * 65)


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_screen_command(parser.add_subparsers(dest="command"))
    return parser.parse_args(["screen", "bot", "--suite", "s.yaml", *argv])


def test_flags_are_checked_before_anything_runs() -> None:
    options = check_options(parse("--endpoint", "http://h/run", "--header", "X-Token: a: b"))
    assert isinstance(options, Options)
    assert options.headers == {"X-Token": "a: b"} and options.concurrency == 4
    assert options.settle == 10.0 and SCREENING_ID.match(options.screening_id)
    refused = {
        ("--endpoint", "ftp://h/x"): "--endpoint",
        ("--endpoint", "http://[::1"): "--endpoint",
        ("--target", "m:f", "--rounds", "0"): "--rounds",
        ("--target", "m:f", "--concurrency", "0"): "--concurrency",
        ("--target", "m:f", "--settle", "-1"): "--settle",
        ("--target", "m:f", "--screening-id", "a/b"): "--screening-id",
        ("--target", "m:f", "--fail-on-regression"): "--baseline",
        ("--target", "m:f", "--header", "traceparent: x"): "sets this header itself",
        ("--target", "m:f", "--header", "no colon"): "expected 'Name: value'",
        ("--target", "m:f", "--resume"): "--resume needs the --screening-id",
    }
    for argv, message in refused.items():
        problem = check_options(parse(*argv))
        assert isinstance(problem, str) and message in problem, (argv, problem)
    assert parse_header("X-A: line\nbreak") == "--header X-A: a value cannot hold a line break"


def outcome(task: str, error: str = "none", passed: bool = True) -> Outcome:
    return Outcome(task, 1, error, passed, float(passed), 1.0, "0" * 32)


def test_a_round_line_counts_passes_and_errors(capsys: pytest.CaptureFixture[str]) -> None:
    done = [outcome("a"), outcome("b", "timeout", False), outcome("c", "http_error", False)]
    assert round_line(1, 3, done, 2.0) == (
        "round 1/3: 3 dispatched, 1 passed, 2 errors (http_error 1, timeout 1), 2.0 s"
    )
    lines = RoundLines(3)
    lines.finished(done[0])
    lines.round_ended(1, done[:1])
    lines.close()
    assert capsys.readouterr().err.startswith("round 1/3: 1 dispatched, 1 passed, 0 errors, ")


def test_the_terminal_bar_counts_passes_and_errors() -> None:
    bar = Bar(rounds=1, total=2)
    bar.finished(outcome("a"))
    bar.finished(outcome("b", "timeout", False))
    bar.round_ended(1, [outcome("a"), outcome("b", "timeout", False)])
    bar.close()
    assert (bar.passed, bar.errors) == (1, 1)
    assert isinstance(progress_for(1, 2, io.StringIO()), RoundLines)
