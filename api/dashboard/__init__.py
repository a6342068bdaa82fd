"""The web dashboard: server-rendered pages over the read API's route functions,
and the API's own reference (`/docs`)."""

from fastapi import APIRouter

from api.dashboard import compare_page, pages, reference, screening_pages
from api.dashboard.pages import STATIC

router = APIRouter(include_in_schema=False)
router.include_router(pages.router)
router.include_router(screening_pages.router)
router.include_router(compare_page.router)
router.include_router(reference.router)

__all__ = ["STATIC", "router"]
