"""The `screen` command's client side (SCREEN.md): suites, dispatch, the runs it records.

It talks to a collector over HTTP and OTLP like any other client and imports
none of the collector's server modules (storage, writer, runs, receivers,
ingest, service). Importing the package does nothing: each module is
imported by name (`collector.screening.suite`, ...).
"""
