"""The one ingest path both doors share: authenticate -> admit -> export
(`path.Ingest`, driven as `export` says), whose decode job runs in the
decoder processes (`decoding`: wire decoding in `proto`, then the `stages`:
recognise, rows, pre-assembly), under the in-flight bound (`admission`).

Nothing is imported here: a decoder process loads `decoding` alone, and
importing `path` would bring the web framework into every decoder (~18 MB
each, measured with bench/overload.py).
"""
