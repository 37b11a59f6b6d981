"""Fixtures shared by several test files."""

from __future__ import annotations

import pytest


@pytest.fixture
def client():
    """A Starlette TestClient of the web app offering three small agents (``web_client.SMALL``)."""
    from web_client import small_client

    return small_client()
