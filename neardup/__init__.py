"""neardup: near-duplicate detection for Elasticsearch, Chinese text first.

The pure fingerprinting core lives in :mod:`neardup.ingest`; this package holds the edges:
command line, configuration, the embedded Elasticsearch and the Elasticsearch I/O.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
