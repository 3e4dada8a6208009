"""Elasticsearch I/O: the client and index set-up, candidate lookup, ingest-time flagging, batch dedupe and
reconcile, jobs, and the reading side (search, clusters, overview)."""
