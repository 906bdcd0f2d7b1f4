"""The page in ``suture serve``: its ring, fed by every exchange, and its mount under ``ui.path``."""

from __future__ import annotations

from starlette.routing import Mount

from .. import provider_table
from ..browsers import is_loopback
from ..learnt import LearntProfiles
from ..settings import ConfigError, Settings
from .feed import Feed
from .page import LiveSource, build_page
from .ring import Ring

_OWN_PATHS = ("/healthz", "/readyz", "/metrics")


def page_for(settings: Settings, learnt: LearntProfiles | None = None) -> tuple[Feed, Mount]:
    """The page's feed and mount, when ``ui.enabled``; raises ConfigError on an unsafe setup."""
    ui = settings.ui
    if not is_loopback(settings.host) and ui.api_key is None:
        raise ConfigError(
            f"ui.enabled on {settings.host}, not a loopback address, needs a key for the page: set SUTURE_UI_API_KEY"
        )
    taken = [*_OWN_PATHS, *(p for route in provider_table.ROUTES for p in route.paths)]
    for path in taken:
        first = "/" + path.strip("/").split("/")[0]
        if ui.path == path or ui.path == first or ui.path.startswith(first + "/"):
            raise ConfigError(f"ui.path {ui.path} clashes with Suture's path {path}: choose another")
    feed = Feed(Ring(ui.max_entries, ui.max_bytes, keep_bodies=ui.keep_bodies), ui.path)
    key = ui.api_key.get_secret_value() if ui.api_key is not None else None
    return feed, Mount(ui.path, app=build_page(LiveSource(feed.ring), key=key, learnt=learnt))
