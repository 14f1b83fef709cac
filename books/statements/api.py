"""/api/v1 operations of books.statements (mounted by config.api)."""

from ninja import Router

router = Router(tags=["books"])
