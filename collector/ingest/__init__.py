"""The one ingest path both doors share: authenticate -> admit -> decode ->
validate -> queue for the writer (`path.Ingest`), with the decoder processes
(`decoding`) and the in-flight bound (`admission`).

Nothing is imported here: a decoder process loads `decoding` alone, and
importing `path` would bring the web framework into every decoder (~18 MB
each, measured with bench/overload.py).
"""
