# Relay as a container: slim, not root, its data in a volume, a health check.
# Built and run like this (not built in CI; tests/e2e/test_container.py runs its entry point
# with its environment):
#   docker build -t relay .
#   docker run -p 8765:8765 -v relay-data:/data relay
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    RELAY_HOST=0.0.0.0 \
    RELAY_PORT=8765 \
    RELAY_DATA_DIR=/data \
    RELAY_LOG_FORMAT=json

RUN useradd --system --uid 10001 --user-group --home-dir /data --no-create-home relay \
    && mkdir /data && chown relay:relay /data

WORKDIR /src
COPY pyproject.toml README.md ./
COPY relay_core relay_core
COPY relay_server relay_server
COPY relay_client relay_client
COPY relay_cli relay_cli
COPY relay_mcp relay_mcp
# PostgreSQL's driver and the MCP door come along: one image for every deployment.
RUN pip install '.[postgres]' && rm -rf /src

USER relay
WORKDIR /data
VOLUME /data
EXPOSE 8765
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ['RELAY_PORT'] + '/health', timeout=2)"]
ENTRYPOINT ["relay", "serve"]
