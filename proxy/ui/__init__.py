"""The page of recent requests and what Suture repaired in them (``ui:`` in the settings).

``transcript`` (the before/after model) and ``terminal`` (its text rendering) are pure and
import nothing of the server: the CLI uses them too. ``ring`` keeps recent exchanges in
memory, ``routes`` serves the page, ``chart`` draws its counts as SVG.
"""
