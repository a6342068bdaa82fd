"""Making text an agent wrote safe to put in a report: cut, XML-clean, Markdown-escaped.

An agent may answer anything: control characters, `]]>`, Markdown that
closes the block around it, a megabyte. Every text of a report that came
from an agent, a suite or a user goes through one of these, so a report
always parses and renders as its writer meant it.
"""

from __future__ import annotations

import html
import re
from typing import Final

# Issue 41: the grader, the expected answer and the output are each cut to 2,000
# characters in a report (a CI page shows them; the run's page has them whole).
TEXT_LIMIT: Final = 2000
# XML 1.0 section 2.2 "Characters": Char ::= #x9 | #xA | #xD | [#x20-#xD7FF] |
# [#xE000-#xFFFD] | [#x10000-#x10FFFF]. Anything else makes the document ill-formed.
_NOT_XML: Final = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# Control characters a Markdown renderer would show as nothing or as a line break, and the
# bidirectional overrides that make text read otherwise than it is (CVE-2021-42574).
_NOT_SHOWN: Final = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]"
)
# ASCII punctuation that means something inline in GitHub's Markdown (CommonMark allows a
# backslash before any ASCII punctuation): emphasis, code, links, HTML, tables, math.
_MARKDOWN: Final = re.compile(r"([\\`*_\[\]<>|~&!$#])")


def visible(char: str) -> str:
    """A character no report can carry, as its Python escape (`\\x1b`, `\\ud800`)."""
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def cut(text: str, limit: int = TEXT_LIMIT) -> str:
    """At most `limit` characters, saying how long the whole was when it was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[cut at {limit:,} of {len(text):,} characters]"


def xml_text(text: str) -> str:
    """Text that XML 1.0 can hold: every character outside its range made visible.
    (ElementTree escapes &, < and > but writes an invalid character as it is.)"""
    return _NOT_XML.sub(lambda m: visible(m.group()), text)


def shown(text: str) -> str:
    """Control characters made visible, line breaks and tabs kept (a code block)."""
    return _NOT_SHOWN.sub(lambda m: visible(m.group()), text)


def inline(text: str, limit: int = 200) -> str:
    """One line of Markdown that shows `text` literally (a table cell, a heading)."""
    one_line = " ".join(shown(cut(text, limit)).split())
    return _MARKDOWN.sub(r"\\\1", one_line)


def code(text: str, limit: int = 200, *, cell: bool = False) -> str:
    """An inline code span of `text`, fenced so no backtick inside can close it; in a table
    `cell`, its pipes escaped (GitHub's tables split on them even inside code)."""
    one_line = " ".join(shown(cut(text, limit)).split())
    if cell:
        one_line = one_line.replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", one_line)), default=0)
    fence = "`" * (longest + 1)
    padded = f" {one_line} " if one_line.startswith("`") or one_line.endswith("`") else one_line
    return f"{fence}{padded}{fence}"


def block(text: str, language: str = "text") -> str:
    """A fenced code block of `text` (already cut), longer fence than any inside it."""
    body = shown(text)
    longest = max((len(run) for run in re.findall(r"`{3,}", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{body}\n{fence}"


def html_text(text: str, limit: int = 200) -> str:
    """One line for an HTML context (a `<summary>`), every markup character escaped."""
    return html.escape(" ".join(shown(cut(text, limit)).split()), quote=True)
