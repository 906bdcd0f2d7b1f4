"""Suture's threat model, and the tests that hold it.

Who can reach Suture:
- **Its clients**: agents and SDKs on the same machine or network. With ``client_api_key`` set
  they must present it; without it, anything that can open a connection to the port may use
  every route, and Suture's own upstream keys with them (the start-up line warns of that).
- **Web pages the user visits** (the browser on the same machine as a loopback Suture): they may
  make the browser send requests to it, and with DNS rebinding read the answers. They may do
  nothing: a Host other than a loopback name, an IP address, the bound address or
  ``allowed_hosts`` gets 421, a request a browser marks as another site's or another origin's
  gets 403 unless ``allowed_origins`` lists it (test_browsers.py).
- **Upstreams** (providers, gateways, an egress proxy): trusted for their answers' content, not
  for their framing or size; a provider's error that quotes a key never carries it on to a
  client, a log or a capture (test_secrets.py, test_hardening.py, test_provider_messages.py).
- **Whoever reads Suture's logs, metrics, captures and page**: never sees a key; bounded in what
  one client can make them hold (model names, paths, bodies: test_hardening.py,
  test_page_limits.py).

What no client may do: choose the upstream host (test_ssrf.py), grow Suture's memory or stall its
event loop without bound (request heads, bodies, the page, the metrics' labels), or make Suture
send its own key to a host the configuration does not name.
"""
