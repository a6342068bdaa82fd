"""Reports of a screening and of a compare for CI: JUnit XML and Markdown (issue 41).

The writers are pure: they take what the screener and the collector said
(`facts`), return text, and know nothing of HTTP or of the server. The
commands (`screen`, `compare`) gather the facts and put the text where it
was asked for (`output`).
"""
