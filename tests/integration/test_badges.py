"""Badges over HTTP (CERTS.md section 5): headers, ETag and 304, the shields.io
endpoint JSON, unknown agents, and figures read from the kept board."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from tests.integration.certificates import API, agent_id_of, get, send_run
from tests.integration.harness import Collector


def test_the_badge_has_its_headers_an_etag_and_answers_304_when_unchanged(
    collector: Collector,
) -> None:
    send_run(collector, service="badged")
    collector.settle()
    ident = agent_id_of(collector, "badged")
    reply = get(collector, f"/badge/{ident}.svg")  # keyless
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "image/svg+xml; charset=utf-8"
    assert reply.headers["cache-control"] == "max-age=300"
    assert reply.headers["content-security-policy"] == (
        "default-src 'none'; style-src 'unsafe-inline'"
    )
    assert reply.headers["x-content-type-options"] == "nosniff"
    ET.fromstring(reply.text)
    tag = reply.headers["etag"]
    again = collector.http.get(
        f"{collector.http_url}/badge/{ident}.svg", headers={"if-none-match": tag}
    )
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == tag
    weak = collector.http.get(
        f"{collector.http_url}/badge/{ident}.svg", headers={"if-none-match": f'"x", W/{tag}'}
    )
    assert weak.status_code == 304
    other = collector.http.get(
        f"{collector.http_url}/badge/{ident}.svg", headers={"if-none-match": '"stale"'}
    )
    assert other.status_code == 200


def test_the_badge_json_is_the_shields_endpoint_schema(collector: Collector) -> None:
    send_run(collector, service="badged")
    collector.settle()
    ident = agent_id_of(collector, "badged")
    body = get(collector, f"{API}/agents/{ident}/badge.json").json()
    assert body == {
        "schemaVersion": 1,
        "label": "badged",
        "message": body["message"],
        "color": body["color"],
    }
    assert body["message"].endswith("self-reported") and "#" not in body["color"]


def test_an_unknown_agent_gets_404_with_a_grey_unknown_badge(collector: Collector) -> None:
    for ident in ("00000000-0000-0000-0000-000000000000", "not-a-uuid"):
        reply = get(collector, f"/badge/{ident}.svg")
        assert reply.status_code == 404
        assert reply.headers["content-type"].startswith("image/svg+xml")
        assert "unknown" in reply.text and "#9f9f9f" in reply.text
        ET.fromstring(reply.text)
        assert get(collector, f"{API}/agents/{ident}/badge.json").json()["message"] == "unknown"


def test_the_badge_reads_the_kept_board_not_the_runs(collector: Collector) -> None:
    send_run(collector, service="badged")
    collector.settle()
    ident = agent_id_of(collector, "badged")
    collector.execute(
        f"UPDATE agent_board SET composite_score = 91.25, graded_runs = completed_runs "
        f"WHERE agent_id = '{ident}'"
    )
    body = get(collector, f"{API}/agents/{ident}/badge.json").json()
    assert (body["message"], body["color"]) == ("91.2 \u2713 verified", "4c1")
