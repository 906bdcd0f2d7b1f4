"""Suture's pure core: repair and validate LLM request transcripts.

No I/O, no clock, no randomness, no environment: a request body in, a repaired body and a
repair log out.
"""

from ._errors import PolicyError, SanitizeError, UnknownAPIError, UnknownProviderError
from ._model import Repair, SanitizeResult
from ._policy import Policy
from .capabilities import Capabilities, model_capabilities
from .providers import Api
from .sanitize import APIS, SANITIZE_PROVIDERS, looks_clean, sanitize, validator_provider
from .validation import PROVIDERS, Violation, error_envelope, validate

__all__ = [
    "APIS",
    "PROVIDERS",
    "SANITIZE_PROVIDERS",
    "Api",
    "Capabilities",
    "Policy",
    "PolicyError",
    "Repair",
    "SanitizeError",
    "SanitizeResult",
    "UnknownAPIError",
    "UnknownProviderError",
    "Violation",
    "error_envelope",
    "looks_clean",
    "model_capabilities",
    "sanitize",
    "validate",
    "validator_provider",
]
