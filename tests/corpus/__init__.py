"""Real transcripts that a provider rejected, collected from public issue threads and pull requests.

Each case is one JSON file under ``cases/<provider>/``; the loader and the format of a case are in
:mod:`tests._support.corpus`. ``python -m tests.corpus`` prints the table per provider.
"""
