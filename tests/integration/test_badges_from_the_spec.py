"""CERTS.md section 5 checked from the spec alone on both databases: each
agent's badge (SVG and shields.io endpoint JSON) says what its /stats says,
in the spec's texts and colours, parses as XML whatever the agent's name, and
carries the spec's headers; the agent, run and screening pages link the
badge's embed lines and the certificates."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.harness import Collector
from tests.integration.spec_runs import (
    API,
    agent_id,
    get,
    run_id,
    run_spans,
    send,
    signed_collector,
)

SVG = "{http://www.w3.org/2000/svg}"
GREY = "#9f9f9f"
BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
HEADERS = {
    "content-type": "image/svg+xml; charset=utf-8",
    "cache-control": "max-age=300",
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
    "x-content-type-options": "nosniff",
}


@pytest.fixture
def collector(tmp_path: Path, database_url: str) -> Iterator[Collector]:
    with signed_collector(tmp_path, database_url) as running:
        yield running


def colour_of(composite: float | None) -> str:
    """Section 5: by composite, >= 90, 75, 50, 25; grey for none."""
    if composite is None:
        return GREY
    for floor, colour in ((90, "#4c1"), (75, "#97ca00"), (50, "#dfb317"), (25, "#fe7d37")):
        if composite >= floor:
            return colour
    return "#e05d44"


def expected(c: Collector, ident: str) -> tuple[str, str, str]:
    """(full name, message, colour) as the spec derives them from the API."""
    name = get(c, f"{API}/agents/{ident}").json()["name"]
    stats = get(c, f"{API}/agents/{ident}/stats").json()
    composite = stats["composite_score"]
    if composite is None:
        return name, "no runs", GREY
    mark = "\u2713 verified" if stats["verified_state"] == "verified" else "self-reported"
    return name, f"{composite:.1f} {mark}", colour_of(composite)


def shown_name(name: str) -> str:
    """At most 32 characters, `...` included, when cut."""
    return name if len(name) <= 32 else name[:29] + "..."


def same_text(shown: str, meant: str) -> bool:
    """Equal, but a bidirectional control may be shown replaced (U+FFFD)."""
    return BIDI.sub("\ufffd", shown) == BIDI.sub("\ufffd", meant)


def check_badge(c: Collector, ident: str, name: str, message: str, colour: str) -> None:
    reply = get(c, f"/badge/{ident}.svg")  # keyless
    assert reply.status_code == 200
    for header, value in HEADERS.items():
        assert reply.headers[header] == value, header
    root = ET.fromstring(reply.content)  # well-formed XML
    assert root.tag == f"{SVG}svg"
    assert "script" not in {el.tag.removeprefix(SVG) for el in root.iter()}
    title = root.find(f"{SVG}title")
    assert title is not None and title.text is not None
    assert same_text(title.text, f"{name}: {message}")  # the full text, for screen readers
    drawn = {el.text or "" for el in root.iter(f"{SVG}text")}
    assert any(same_text(text, shown_name(name)) for text in drawn), drawn
    assert message in drawn
    fills = {el.get("fill") for el in root.iter(f"{SVG}rect")}
    assert colour in fills
    assert not (fills & {"#4c1", "#97ca00", "#dfb317", "#fe7d37", "#e05d44", GREY}) - {colour}
    assert get(c, f"/badge/{ident}.svg").headers["etag"] == reply.headers["etag"]
    conditional = c.http.get(
        f"{c.http_url}/badge/{ident}.svg", headers={"if-none-match": reply.headers["etag"]}
    )
    assert conditional.status_code == 304
    endpoint = get(c, f"{API}/agents/{ident}/badge.json").json()
    assert endpoint["schemaVersion"] == 1 and set(endpoint) == {
        "schemaVersion",
        "label",
        "message",
        "color",
    }
    assert same_text(endpoint["label"], shown_name(name))
    assert (endpoint["message"], endpoint["color"]) == (message, colour.removeprefix("#"))


def runs_of(
    c: Collector, service: str, outcomes: list[bool], key: str = "", latency_s: float = 0.2
) -> None:
    for n, success in enumerate(outcomes):
        spans = run_spans(f"task-{n % 3}", {"badge.run.success": success})
        spans[0].end_ns = spans[0].start_ns + int(latency_s * 1e9)
        send(c, spans, service=service, key=key)


def test_each_badge_says_what_the_agents_stats_say_in_the_specs_texts_and_colours(
    collector: Collector,
) -> None:
    grader = collector.service.keys.create("owner-a", role="grader")
    runs_of(collector, "graded-top", [True] * 6, key=grader)
    runs_of(collector, "mostly", [True, True, True, False, True, True])
    runs_of(collector, "half", [True, False] * 3, latency_s=20)
    runs_of(collector, "failing", [False] * 6, latency_s=60)
    open_only = run_spans("open")[2]  # a step whose parent never comes: running
    send(collector, [open_only], service="waiting")
    collector.settle()
    seen: set[str] = set()
    for service in ("graded-top", "mostly", "half", "failing", "waiting"):
        ident = agent_id(collector, service)
        name, message, colour = expected(collector, ident)
        check_badge(collector, ident, name, message, colour)
        seen.add(colour)
    assert "\u2713 verified" in expected(collector, agent_id(collector, "graded-top"))[1]
    assert expected(collector, agent_id(collector, "waiting"))[1] == "no runs"
    assert len(seen) >= 3  # the thresholds were crossed, not one colour checked


@pytest.mark.parametrize(
    "service",
    [
        "<script>alert(1)</script>",
        "q\"u'o&te <b>&amp;",
        "x" * 500,  # PostgreSQL's agents.name holds 500: longer is refused at ingest there
        "\u202eevil\u202c name \u200f",
    ],
)
def test_a_hostile_name_shows_escaped_in_a_badge_that_parses(
    collector: Collector, service: str
) -> None:
    runs_of(collector, service, [True, True])
    collector.settle()
    [(ident,)] = collector.query("SELECT id FROM agents")
    name, message, colour = expected(collector, ident)
    check_badge(collector, str(ident), name, message, colour)
    body = get(collector, f"/badge/{ident}.svg").text
    assert "<script" not in body and "<b>" not in body


def test_deleted_and_unknown_agents_get_grey_badges(collector: Collector) -> None:
    runs_of(collector, "leaving", [True])
    collector.settle()
    ident = agent_id(collector, "leaving")
    deleted = collector.http.delete(
        f"{collector.http_url}{API}/agents/{ident}",
        headers={"authorization": f"Bearer {collector.key}"},
    )
    assert deleted.status_code == 204
    check_badge(collector, ident, "leaving", "deleted", GREY)
    for unknown in ("00000000-0000-0000-0000-000000000000", "not-an-id"):
        reply = get(collector, f"/badge/{unknown}.svg")
        assert reply.status_code == 404
        assert reply.headers["content-type"].startswith("image/svg+xml")
        root = ET.fromstring(reply.content)
        assert "unknown" in {el.text for el in root.iter(f"{SVG}text")}
        assert GREY in {el.get("fill") for el in root.iter(f"{SVG}rect")}


def links(page: str) -> list[str]:
    return [html.unescape(h) for h in re.findall(r'href="([^"]+)"', page)]


def test_the_pages_embed_the_badge_and_link_the_certificates(collector: Collector) -> None:
    spans = run_spans(
        "a",
        {
            "badge.screening.id": "scr-p",
            "badge.screening.round": 1,
            "badge.suite.name": "s",
            "badge.suite.digest": "aa" * 32,
        },
    )
    send(collector, spans, service="paged")
    collector.settle()
    ident, run = agent_id(collector, "paged"), run_id(collector, spans)
    page = get(collector, f"/agents/{ident}").text
    image = f"{collector.http_url}/badge/{ident}.svg"
    target = f"{collector.http_url}/agents/{ident}"
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert f"[![paged]({image})]({target})" in text  # the Markdown to embed it
    assert f'<a href="{target}"><img src="{image}"' in text  # the HTML
    assert f"/badge/{ident}.svg" in page
    certificate = f"/api/v1/agents/{ident}/certificate"
    assert certificate in links(page)
    run_page = get(collector, f"/runs/{run}").text
    screening_page = get(collector, f"/agents/{ident}/screenings/scr-p").text
    found: list[Any] = [
        next(h for h in links(run_page) if h.endswith(f"/runs/{run}/certificate")),
        next(h for h in links(screening_page) if "/screenings/scr-p/certificate" in h),
        certificate,
    ]
    for href in found:
        assert get(collector, href).status_code == 200, href
