"""The table of native routes (docs/getting-started.md), generated from the route table.

``python -m proxy.routes.reference`` prints the Markdown table; a test keeps the docs' copy
(between ``<!-- routes:begin -->`` and ``<!-- routes:end -->``) equal to it.
"""

from __future__ import annotations

import sys

from .. import provider_table

_KEY_SENT_AS = {
    "bearer": "`Authorization: Bearer`",
    "x-api-key": "`x-api-key`",
    "x-goog-api-key": "`x-goog-api-key`",
    "sigv4": "an AWS SigV4 signature (Suture's AWS credentials)",
}


def reference(routes: tuple[provider_table.Route, ...] | None = None) -> str:
    """One line per row of ``routes`` (by default the route table's)."""
    lines = [
        "| POST to Suture | Format | Settings section | Sent to (default) | Client's key for Suture in "
        "| Suture's own key sent as | `suture replay` reads |",
        "|---|---|---|---|---|---|---|",
    ]
    for route in routes or provider_table.ROUTES:
        provider = route.provider
        paths = "<br>".join(f"`{path}`" for path in route.paths)
        upstream = provider.default_upstream + (route.upstream_path or "{the path as sent}")
        client_key = [
            "`Authorization: Bearer`" if name == "authorization" else f"`{name}`"
            for name in provider.client_key_headers
        ]
        if provider.key_query:
            client_key.append(f"`?{provider.key_query}=`")
        replay = f"`{provider.key_env}`" if provider.key_env else "(through Suture only)"
        lines.append(
            f"| {paths} | `{route.api}` | `{provider.name}:` | `{upstream}` | {', '.join(client_key)} "
            f"| {_KEY_SENT_AS[provider.upstream_key]} | {replay} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(reference())
