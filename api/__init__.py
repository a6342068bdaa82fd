"""FastAPI read API over the Protocols it defines (`api.ports`).

Imports `scoring` and nothing else of ours; `collector` implements the ports.
"""

from api.app import create_api

__all__ = ["create_api"]
