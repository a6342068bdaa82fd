"""Recording kit: capture real OTLP exports of an agent framework with code-counted ground truth.

    from kit import Recording, current

See README.md beside this file for the API. `Recording` & co. are imported lazily, so that
`python -m kit.capture` / `python -m kit.finish` run their modules only once.
"""

from typing import Any

from kit.truth import Run, current

__all__ = ["KIT_PACKAGES", "ROOT_SPAN_NAME", "Recording", "Run", "current", "package_versions"]


def __getattr__(name: str) -> Any:
    if name in ("KIT_PACKAGES", "ROOT_SPAN_NAME", "Recording", "package_versions"):
        from kit import recording

        return getattr(recording, name)
    raise AttributeError(f"module 'kit' has no attribute {name!r}")
