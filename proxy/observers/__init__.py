"""What is told of every finished exchange: each an :class:`~proxy.exchange.Observer`, registered
once at start-up by ``build_app`` (the page's feed and the tracer are observers too, in their own
modules). The request path never names one: adding an observer touches no request code."""
