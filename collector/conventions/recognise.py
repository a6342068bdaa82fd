"""Recognition of one decoded span: the step the ingest path takes between
wire decoding and row building (CONVENTIONS.md section 4).

`recognise_span` is the one entry point: the decoders call it for every
span, benches and tools call it on spans they decoded themselves. It reads
only what `proto` lifted (the Selection built from the same conventions).
"""

from __future__ import annotations

from collector.conventions.active import ConventionSet, builtin_set
from collector.conventions.recognition import Recognition
from proto import WireSpan


def recognise_span(span: WireSpan, conventions: ConventionSet | None = None) -> Recognition:
    """Which role `span` plays, by which rule, and what that role reads,
    under `conventions` (the built-in set when None)."""
    recognizer = (conventions or builtin_set()).recognizer
    return recognizer.recognise(
        span.name, span.kind, span.status_code, span.scope_name, span.attributes, span.resource
    )
