"""FastAPI read API over the Protocols it defines (`api.ports`); the app
factory is `api.app.create_api`.

Imports `scoring` and nothing else of ours; `collector` implements the ports.
Nothing is imported here: the collector's decoder processes use `api.ports`
types and must not load the web framework with them.
"""
