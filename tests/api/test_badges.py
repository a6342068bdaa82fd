"""The badge's texts, colours and SVG (CERTS.md section 5): hostile names
parse as XML and show escaped; thresholds; the embed lines."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

from api.certificate_ports import BadgeInfo
from api.views.badges import badge_of, embed, svg

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = [
    "<script>alert(1)</script>",
    "quo\"te's <b>",
    "a & b &amp; c ]]> <!-- x -->",
    "x" * 10_000,
    "\u202eevil\u202c \u2067name\u2069 \u200f",
    "ctrl\x01\x08\x0b\x1f\x7f\x85 end",
    "emoji 🎉 名前 ünï",
]


def info(name: str = "agent", composite: float | None = 87.5, **extra: object) -> BadgeInfo:
    values: dict[str, object] = dict(
        agent_id="a", name=name, composite_score=composite, completed_runs=4, graded_runs=4
    )
    values.update(extra)
    values.setdefault("deleted", False)
    return BadgeInfo(**values)  # type: ignore[arg-type]


def texts(document: str) -> tuple[str, list[str]]:
    root = ET.fromstring(document)  # well-formed XML, or this raises
    assert root.tag == f"{SVG}svg" and root.get("version") == "1.1"
    title = root.find(f"{SVG}title")
    assert title is not None and title.text is not None
    return title.text, [t.text or "" for t in root.iter(f"{SVG}text")]


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_parse_as_xml_and_show_escaped(name: str) -> None:
    shown = badge_of(info(name))
    document = svg(shown)
    title, drawn = texts(document)
    assert "<script" not in document and "<b>" not in document and "<!--" not in document
    for control in ("\u202e", "\u2067", "\u200f", "\x01", "\x7f", "\x85"):
        assert control not in document  # visibly replaced, never acted on
    assert drawn == [shown.label, shown.label, shown.message, shown.message]
    assert len(shown.label) <= 32
    assert title == f"{shown.title}" and title.endswith(": 87.5 \u2713 verified")
    assert ET.fromstring(document).get("aria-label") == title


def test_a_long_name_is_cut_to_32_characters_dots_included_and_the_title_keeps_it_whole() -> None:
    shown = badge_of(info("x" * 10_000))
    assert shown.label == "x" * 29 + "..."
    title, _ = texts(svg(shown))
    assert title.startswith("x" * 10_000 + ":")
    assert badge_of(info("y" * 32)).label == "y" * 32  # not cut at the limit


@pytest.mark.parametrize(
    ("composite", "colour"),
    [
        (100.0, "#4c1"),
        (90.0, "#4c1"),
        (89.96, "#97ca00"),  # shown as 90.0, but the composite is below 90
        (89.9, "#97ca00"),
        (75.0, "#97ca00"),
        (74.9, "#dfb317"),
        (50.0, "#dfb317"),
        (49.9, "#fe7d37"),
        (25.0, "#fe7d37"),
        (24.9, "#e05d44"),
        (0.0, "#e05d44"),
    ],
)
def test_the_colour_follows_the_composite(composite: float, colour: str) -> None:
    shown = badge_of(info(composite=composite))
    assert shown.color == colour and f'fill="{colour}"' in svg(shown)


def test_the_message_says_verified_self_reported_no_runs_deleted_or_unknown() -> None:
    assert badge_of(info()).message == "87.5 \u2713 verified"
    assert badge_of(info(graded_runs=1)).message == "87.5 self-reported"  # partial
    assert badge_of(info(graded_runs=0)).message == "87.5 self-reported"
    assert badge_of(info(composite=None)).message == "no runs"
    deleted = badge_of(info(deleted=True))
    assert (deleted.message, deleted.color) == ("deleted", "#9f9f9f")
    assert badge_of(info(composite=None)).color == "#9f9f9f"
    unknown = badge_of(None)
    assert (unknown.message, unknown.color, unknown.status) == ("unknown", "#9f9f9f", 404)
    texts(svg(unknown))


def test_the_embed_lines_link_the_badge_to_the_agent_page_and_escape_the_name() -> None:
    lines = embed("http://127.0.0.1:4318/", "a1", 'my [agent]("x")')
    assert lines.markdown == (
        '[![my \\[agent\\]("x")](http://127.0.0.1:4318/badge/a1.svg)]'
        "(http://127.0.0.1:4318/agents/a1)"
    )
    assert lines.html == (
        '<a href="http://127.0.0.1:4318/agents/a1"><img src="http://127.0.0.1:4318/badge/a1.svg" '
        'alt="my [agent](&quot;x&quot;)"></a>'
    )
    found: dict[str, str | None] = {}

    class Images(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag == "img":
                found.update(attrs)

    Images().feed(lines.html)
    assert found["alt"] == 'my [agent]("x")'  # the browser reads the name back whole
