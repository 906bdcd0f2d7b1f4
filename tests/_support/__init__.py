"""Helpers shared by test modules: servers on loopback ports, fake upstreams and providers, request
bodies and transcripts, case loaders. Test modules and conftest.py files import from here, never
from one another. Fixtures stay in conftest.py files (which may build them from these helpers)."""
