"""SigV4 for the Bedrock route: Suture signs each request it sends with its own AWS credentials.

A client's SigV4 signature covers the body's hash, so it dies with the first repaired byte; and
forwarding a client's signature would make Suture a replay relay for whoever holds it. So the
Bedrock route drops the client's ``Authorization`` and ``X-Amz-*`` headers and signs the exact
request httpx is about to send (method, URL as sent, body bytes) with botocore.
"""

from __future__ import annotations

import anyio.to_thread
import httpx
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials, ReadOnlyCredentials

# Bedrock Runtime's signing name (the endpoint is bedrock-runtime, the SigV4 service is bedrock).
SERVICE = "bedrock"


class NoCredentialsError(Exception):
    """The standard AWS credential chain found nothing to sign with."""


class SigV4Signer:
    """Signs ``httpx.Request`` objects in place for ``service`` in ``region``."""

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

    async def __call__(self, request: httpx.Request) -> None:
        # Refreshable credentials (SSO, assumed roles) may fetch new ones over the network here.
        frozen: ReadOnlyCredentials = await anyio.to_thread.run_sync(self.credentials.get_frozen_credentials)
        self.sign(request, frozen)

    def sign(self, request: httpx.Request, credentials: ReadOnlyCredentials) -> None:
        """Add ``Authorization``, ``X-Amz-Date`` (and ``X-Amz-Security-Token``) to ``request``.

        The signed headers are host, content-type and the X-Amz-* ones Suture sets: the other
        forwarded headers may pass unsigned, and nothing httpx adds later can break the signature.
        """
        url = request.url
        # The path exactly as it goes on the wire: a model id's ':' stays %3A, as boto3 sent it.
        wire_url = f"{url.scheme}://{url.netloc.decode('ascii')}{url.raw_path.decode('ascii')}"
        signed = {"host": request.headers["host"]}
        if "content-type" in request.headers:
            signed["content-type"] = request.headers["content-type"]
        aws = AWSRequest(method=request.method, url=wire_url, data=request.content, headers=signed)
        SigV4Auth(credentials, self.service, self.region).add_auth(aws)
        for name in ("Authorization", "X-Amz-Date", "X-Amz-Security-Token"):
            if name in aws.headers:
                request.headers[name] = aws.headers[name]
