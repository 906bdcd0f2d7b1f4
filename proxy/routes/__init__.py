"""The request path: from a client's request to the upstream's answer.

``proxy.provider_table`` (the native routes, one row each) → ``endpoints`` (Starlette's routes,
built from the table) → ``transcripts`` (read, parse, repair, judge) → ``send_native`` or ``send_litellm`` →
the answer from ``proxy.upstreams``. ``proxy.exchange`` carries one request through all of it and
hands it to the observers (metrics, log lines, capture...) once at the end. Importing this
package imports nothing.
"""
