"""The request path: from a client's request to the upstream's answer.

``table`` (the native routes, one row each) → ``endpoints`` (Starlette's routes, built from the
table) → ``transcripts`` (read, parse, repair, judge) → ``send_native`` or ``send_litellm`` →
the answer from ``proxy.upstreams``. ``exchange`` carries one request through all of it and
writes its log line, metrics and capture once at the end. Importing this package imports
nothing: the settings and the CLI read ``table`` without the server.
"""
