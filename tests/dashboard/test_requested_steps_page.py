"""The run page says where a run's steps came from (docs/runs.md
`steps_source`): a run whose instrumentation emits no tool span shows the
tool calls its model requested, and says they are requested calls."""

from __future__ import annotations

import time
from typing import Any

from selenium import webdriver
from selenium.webdriver.common.by import By

from bench.support.otlp import new_span_id, new_trace_id, request, span
from tests.dashboard.conftest import Live
from tests.dashboard.test_pages import no_page_errors

AGENT = "client-only-loop"  # no task and no agent span: off the board the other tests read
ANSWER = (
    '[{"role": "assistant", "parts": ['
    '{"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {}},'
    '{"type": "tool_call", "id": "c2", "name": "get_time", "arguments": {}}]}]'
)


def client_only_run(live: Live) -> dict[str, Any]:
    """A root and one chat span that asked for two tool calls; no tool span."""
    trace_id, root = new_trace_id(), new_span_id()
    chat = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "m",
        "gen_ai.output.messages": ANSWER,
    }
    spans = [
        span(trace_id, root, "loop"),
        span(trace_id, new_span_id(), "chat m", parent=root, attributes=chat),
    ]
    reply = live.http.post(
        f"{live.url}/v1/traces",
        content=request(spans, AGENT).SerializeToString(),
        headers={"content-type": "application/x-protobuf", "authorization": f"Bearer {live.key}"},
    )
    assert reply.status_code == 200, reply.text
    deadline = time.monotonic() + 20
    while True:
        agents = live.api("/agents", all="true")["items"]
        ident = next((a["id"] for a in agents if a["name"] == AGENT), None)
        runs = live.api("/runs", agent_id=ident)["items"] if ident else []
        if runs and runs[0]["status"] == "completed":
            return dict(runs[0])
        assert time.monotonic() < deadline, "the run did not complete"
        time.sleep(0.2)


def test_the_run_page_says_its_steps_are_the_calls_the_model_requested(
    live: Live, browser: webdriver.Chrome
) -> None:
    run = client_only_run(live)
    assert (run["steps"], run["steps_source"]) == (2, "requested")
    browser.get_log("browser")  # what earlier tests left in the log is theirs
    browser.get(f"{live.url}/runs/{run['id']}")
    assert browser.find_element(By.ID, "steps").text == "2"
    assert browser.find_element(By.ID, "steps-source").text == "requested"
    assert "the model asked for" in browser.find_element(By.ID, "tools-requested").text
    steps = browser.find_elements(By.CSS_SELECTOR, "#tool-steps li code")
    assert [s.text for s in steps] == ["get_weather", "get_time"]
    no_page_errors(browser)
