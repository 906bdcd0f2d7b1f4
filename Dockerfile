# Suture: small, non-root, configured by a mounted file (/etc/suture/suture.yaml) or SUTURE_* variables.
# Build stage: only the wheel leaves it (no source tree, no build tools in the image).
FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY sanitizer ./sanitizer
COPY proxy ./proxy
COPY config ./config
RUN pip wheel --no-deps --wheel-dir /wheels .

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# The dependencies exactly as locked, each checked against its hash: two builds of one commit get
# the same packages. The wheel itself then adds no dependency of its own.
COPY requirements.lock /tmp/requirements.lock
COPY --from=build /wheels /wheels
RUN pip install --require-hashes --only-binary :all: -r /tmp/requirements.lock \
 && pip install --no-deps /wheels/*.whl && rm -rf /wheels /tmp/requirements.lock \
 && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin suture
# The default configuration; mount your own file over it (a ConfigMap, a bind mount).
COPY config/suture.yaml /etc/suture/suture.yaml

USER 10001
EXPOSE 8787
HEALTHCHECK --interval=15s --timeout=3s --start-period=5s --retries=3 \
  CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8787/healthz', timeout=2).status != 200)"]
CMD ["suture", "serve", "--host", "0.0.0.0", "--port", "8787", "--config", "/etc/suture/suture.yaml"]
