"""Recognition as data (CONVENTIONS.md): which span is a tool step, an LLM
call or an agent, and where its tool name, model, tokens and cost are, read
from convention files rather than written in code.

The bottom of the collector's layers: run assembly (collector.assembly)
takes a span's `Recognition` and applies the rules that hold for every
family (RUNS.md: roots, nested duplicates, handoffs, which span wins).
Built-in files, one per instrumentation family, ship in `builtin/`; users
add their own (`--conventions`, BADGE_CONVENTIONS), tried first.
"""

from collector.conventions.active import (
    BUILT_IN,
    ConventionSet,
    ConventionSource,
    builtin_set,
    builtin_sources,
    compile_set,
    load_active,
    user_sources,
)
from collector.conventions.problems import ConventionError, Problem
from collector.conventions.recognise import recognise_span
from collector.conventions.recognition import (
    AGENT,
    LLM,
    NOT_A_STEP,
    OTHER,
    TOOL,
    UNRECOGNISED,
    Recognition,
    RuleLabel,
)

__all__ = [
    "AGENT",
    "BUILT_IN",
    "LLM",
    "NOT_A_STEP",
    "OTHER",
    "TOOL",
    "UNRECOGNISED",
    "ConventionError",
    "ConventionSet",
    "ConventionSource",
    "Problem",
    "Recognition",
    "RuleLabel",
    "builtin_set",
    "builtin_sources",
    "compile_set",
    "load_active",
    "recognise_span",
    "user_sources",
]
