"""Shared HTTP clients for a run of many waves: inside ``session()`` the calls of every wave
share their clients (cascade.turns.providers.httpclient keeps one per timeout), so a wave
reuses the connections the last one opened; outside, each call has its own, closed when it
returns. No HTTP library is imported here: a run served from the reply cache loads none.
"""
from __future__ import annotations

import contextlib
import contextvars

SESSION: contextvars.ContextVar[dict | None] = contextvars.ContextVar("cascade_http_session",
                                                                      default=None)


@contextlib.asynccontextmanager
async def session():
    """Share clients among the calls made within (tasks started inside inherit the
    context); close them when it ends."""
    clients: dict = {}
    token = SESSION.set(clients)
    try:
        yield
    finally:
        SESSION.reset(token)
        for client in clients.values():
            await client.aclose()
