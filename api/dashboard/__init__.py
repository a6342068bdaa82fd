"""The web dashboard: server-rendered pages over the read API's route functions."""

from api.dashboard.pages import STATIC, router

__all__ = ["STATIC", "router"]
