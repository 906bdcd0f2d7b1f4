"""Answers from upstreams, relayed to the client as they stream.

``native`` sends a request through Suture's HTTP/1.1 pool (``proxy.http1``) and relays the
upstream's bytes; ``via_litellm`` calls litellm for providers without a native route and
re-encodes its events in the client's format; ``streamed`` is what both relays share (watch the
client, keep the outcome, report once when done).
"""
