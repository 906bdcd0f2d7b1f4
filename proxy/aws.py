"""SigV4 for the Bedrock route: Suture signs each request it sends with its own AWS credentials.

A client's SigV4 signature covers the body's hash, so it dies with the first repaired byte; and
forwarding a client's signature would make Suture a replay relay for whoever holds it. So the
Bedrock route drops the client's ``Authorization`` and ``X-Amz-*`` headers and signs the exact
request as it goes on the wire (method, URL as sent, body bytes) with botocore.
"""

from __future__ import annotations

import urllib.parse

import anyio.to_thread
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials, ReadOnlyCredentials

# Bedrock Runtime's signing name (the endpoint is bedrock-runtime, the SigV4 service is bedrock).
SERVICE = "bedrock"
Headers = list[tuple[bytes, bytes]]


class NoCredentialsError(Exception):
    """The standard AWS credential chain found nothing to sign with."""


class SigV4Signer:
    """Signs requests for ``service`` in ``region``: called with one, it returns the headers to add."""

    def __init__(self, credentials: Credentials, region: str, service: str = SERVICE) -> None:
        self.credentials = credentials
        self.region = region
        self.service = service

    @classmethod
    def from_default_chain(cls, region: str) -> SigV4Signer:
        """Credentials as boto3 finds them: environment, shared config and profile, SSO,
        container or instance role. Raises :class:`NoCredentialsError`."""
        import botocore.session

        credentials = botocore.session.Session().get_credentials()
        if credentials is None:
            raise NoCredentialsError(
                "bedrock.enabled is set but no AWS credentials were found (AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY, AWS_PROFILE, SSO, or an instance or container role)"
            )
        return cls(credentials, region)

    async def __call__(self, method: str, url: str, headers: list[tuple[bytes, bytes]], body: bytes) -> Headers:
        # Refreshable credentials (SSO, assumed roles) may fetch new ones over the network here.
        frozen: ReadOnlyCredentials = await anyio.to_thread.run_sync(self.credentials.get_frozen_credentials)
        return self.sign(method, url, headers, body, frozen)

    def sign(
        self, method: str, url: str, headers: list[tuple[bytes, bytes]], body: bytes, credentials: ReadOnlyCredentials
    ) -> Headers:
        """``Authorization``, ``X-Amz-Date`` (and ``X-Amz-Security-Token``) for this request.

        ``url`` is exactly as it goes on the wire (a model id's ':' stays %3A, as boto3 sent it).
        The signed headers are host, content-type and the X-Amz-* ones Suture sets: the other
        forwarded headers may pass unsigned.
        """
        signed = {"host": urllib.parse.urlsplit(url).netloc}
        for name, value in headers:
            if name.lower() == b"content-type":
                signed["content-type"] = value.decode("latin-1")
                break
        aws = AWSRequest(method=method, url=url, data=body, headers=signed)
        SigV4Auth(credentials, self.service, self.region).add_auth(aws)
        return [
            (name.encode(), aws.headers[name].encode())
            for name in ("Authorization", "X-Amz-Date", "X-Amz-Security-Token")
            if name in aws.headers
        ]
