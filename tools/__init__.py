"""Developer tools run from the repository, not installed: ``tools/typecheck.py`` (``make typecheck``)."""
