"""An agent's badge (CERTS.md section 5): a flat two-part SVG in the shields.io
style, and the same texts and colour in the shields.io endpoint schema.

Left the agent's name (at most 32 characters, `...` included, when cut),
right its canonical composite with one decimal and `✓ verified` or
`self-reported`; `no runs` without a composite, `deleted` for a
soft-deleted agent, `unknown` for no such agent. Read from the kept board
(api.certificate_ports.BadgeInfo), never from runs.

Every text is made safe for XML before it is escaped: characters XML 1.0
cannot hold (control characters, lone surrogates, U+FFFE/U+FFFF) and the
bidirectional controls (a right-to-left override would make a name read
backwards, e.g. to fake a score) become U+FFFD, visibly replaced.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

import scoring
from api.certificate_ports import BadgeInfo

NAME_CHARS = 32  # CERTS.md section 5
CUT = "..."
GREY = "#9f9f9f"
# CERTS.md section 5: colour by composite, the highest threshold reached.
COLOURS = ((90.0, "#4c1"), (75.0, "#97ca00"), (50.0, "#dfb317"), (25.0, "#fe7d37"))
LOWEST = "#e05d44"
CHECK = "\u2713"

_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}


@dataclass(frozen=True, slots=True)
class Badge:
    label: str  # as shown (cut)
    message: str
    color: str  # "#rgb" or "#rrggbb"
    title: str  # the full text, for screen readers
    status: int  # 200, or 404 for an unknown agent


def safe(text: str) -> str:
    """What XML 1.0 can hold and reads as written."""
    return _UNSAFE.sub("\ufffd", text)


def escape(text: str) -> str:
    """XML-escaped for text and attribute values alike."""
    return "".join(_ESCAPES.get(ch, ch) for ch in text)


def cut(name: str) -> str:
    return name if len(name) <= NAME_CHARS else name[: NAME_CHARS - len(CUT)] + CUT


def colour(composite: float) -> str:
    """By the composite itself (CERTS.md section 5), not as the badge rounds it:
    89.96 reads 90.0 and is yellow-green, as a reader holding the composite
    from /stats or the score certificate computes it."""
    return next((hex_ for floor, hex_ in COLOURS if composite >= floor), LOWEST)


def badge_of(info: BadgeInfo | None) -> Badge:
    if info is None:
        return Badge("agent", "unknown", GREY, "agent: unknown", 404)
    name = safe(info.name)
    if info.deleted:
        message, color = "deleted", GREY
    elif info.composite_score is None:
        message, color = "no runs", GREY
    else:
        state = scoring.verified_state(info.completed_runs, info.graded_runs)
        mark = f"{CHECK} verified" if state == "verified" else "self-reported"
        message, color = f"{info.composite_score:.1f} {mark}", colour(info.composite_score)
    return Badge(cut(name), message, color, f"{name}: {message}", 200)


def _width(text: str) -> float:
    """The text's width in Verdana 11 px, roughly (shields.io measures it with
    the font's own table; a few pixels either way only changes padding)."""
    total = 0.0
    for ch in text:
        if ch in "iljI.,:;'|!f t":
            total += 3.9
        elif ch in "mwMW@%":
            total += 10.5
        elif ch.isascii() and ch.isupper():
            total += 7.6
        elif ch.isascii():
            total += 6.6
        else:
            total += 11.0 if "\u1100" <= ch <= "\uffdc" else 7.6
    return total


def svg(badge: Badge) -> str:
    """The flat shields.io layout; text drawn at 10x and scaled down, as shields does."""
    label_w, message_w = _width(badge.label) + 10, _width(badge.message) + 10
    width = label_w + message_w
    label, message, title = escape(badge.label), escape(badge.message), escape(badge.title)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{width:.0f}" '
        f'height="20" role="img" aria-label="{title}">',
        f"<title>{title}</title>",
        '<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" '
        'stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>',
        f'<clipPath id="r"><rect width="{width:.0f}" height="20" rx="3" fill="#fff"/></clipPath>',
        f'<g clip-path="url(#r)"><rect width="{label_w:.0f}" height="20" fill="#555"/>'
        f'<rect x="{label_w:.0f}" width="{message_w:.0f}" height="20" fill="{badge.color}"/>'
        f'<rect width="{width:.0f}" height="20" fill="url(#s)"/></g>',
        '<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" '
        'text-rendering="geometricPrecision" font-size="110">',
    ]
    for text, left, box in ((label, 0.0, label_w), (message, label_w, message_w)):
        x, length = (left + box / 2) * 10, (box - 10) * 10
        parts.append(
            f'<text aria-hidden="true" x="{x:.0f}" y="150" fill="#010101" fill-opacity=".3" '
            f'transform="scale(.1)" textLength="{length:.0f}">{text}</text>'
        )
        parts.append(
            f'<text x="{x:.0f}" y="140" transform="scale(.1)" fill="#fff" '
            f'textLength="{length:.0f}">{text}</text>'
        )
    parts.append("</g></svg>")
    return "".join(parts)


def etag(body: str) -> str:
    return '"' + hashlib.sha256(body.encode()).hexdigest()[:32] + '"'


@dataclass(frozen=True, slots=True)
class Embed:
    """The lines a README pastes to show an agent's badge, linked to its page."""

    image: str
    page: str
    markdown: str
    html: str


def embed(base_url: str, agent_id: str, name: str) -> Embed:
    """`base_url`: the collector as its reader reached it (scheme and host)."""
    base = base_url.rstrip("/")
    image, page = f"{base}/badge/{agent_id}.svg", f"{base}/agents/{agent_id}"
    alt = safe(name).replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    return Embed(
        image=image,
        page=page,
        markdown=f"[![{alt}]({image})]({page})",
        html=f'<a href="{escape(page)}"><img src="{escape(image)}" alt="{escape(safe(name))}"></a>',
    )
