"""The read layer: plain functions that answer a reader, one per view.

Each takes the stores it reads (api.ports), the caller (api.auth.Caller)
and plain parameters, returns the document docs/api.md describes (the
pydantic models of api.schemas and its siblings), and raises api.problems
when it cannot answer. The JSON routes (api.routes), the dashboard pages
(api.dashboard) and the CLI's in-process reads (collector.commands) all
call these, so the three cannot disagree; none of them imports the others.
"""
