"""Suture's I/O shell: the HTTP proxy, its settings, logging, metrics and command line."""
