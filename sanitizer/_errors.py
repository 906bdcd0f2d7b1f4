"""The sanitizer's typed errors: every bad input surfaces as one of these, never a bare KeyError."""

from __future__ import annotations


class SanitizeError(ValueError):
    """The request body does not have the shape of the API it claims to be.

    ``path`` names the offending field the way a user finds it in their payload,
    e.g. ``messages[3].content[1].tool_use_id``.
    """

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{path}: {problem}" if path else problem)


class PolicyError(ValueError):
    """A :class:`Policy` field holds a value the sanitizer cannot act on."""


class UnknownAPIError(ValueError):
    """``api=`` names a wire format the sanitizer does not know."""


class UnknownProviderError(ValueError):
    """``provider=`` names a provider the validator does not know."""
