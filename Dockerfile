# Suture: small, non-root, configured by a mounted file or SUTURE_* variables.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY sanitizer ./sanitizer
COPY proxy ./proxy
COPY config ./config
RUN pip install . && useradd --system --uid 10001 suture

USER suture
EXPOSE 8787
HEALTHCHECK --interval=15s --timeout=3s --retries=3 \
  CMD python -c "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8787/healthz', timeout=2).status != 200)"
CMD ["suture", "serve", "--host", "0.0.0.0", "--port", "8787"]
