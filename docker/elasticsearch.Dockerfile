# Elasticsearch with the neardup plugin installed (as the README's "use it on your own cluster" says). Build from
# the repository root: docker build -f docker/elasticsearch.Dockerfile -t neardup-elasticsearch:8.19.21 .
# ES_VERSION must be neardup's (neardup/node/versions.py): Elasticsearch installs only a plugin built for its own
# version; compose passes it, and tests/integrations/test_kibana.py holds the default to it.
ARG ES_VERSION=8.19.21

FROM python:3.11-slim AS plugin
RUN apt-get update \
 && apt-get install -y --no-install-recommends default-jdk-headless maven \
 && rm -rf /var/lib/apt/lists/*
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore NEARDUP_HOME=/build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY neardup ./neardup
COPY ingest ./ingest
COPY mappings ./mappings
COPY service ./service
# `neardup plugin build` prints the zip's path on stdout (the install hint goes to stderr)
RUN pip install /src && zip="$(neardup plugin build)" && cp "$zip" /neardup-plugin.zip

FROM docker.elastic.co/elasticsearch/elasticsearch:${ES_VERSION}
COPY --from=plugin /neardup-plugin.zip /tmp/neardup-plugin.zip
RUN bin/elasticsearch-plugin install --batch file:///tmp/neardup-plugin.zip
