"""Client documents as they come in, before neardup fingerprints or writes them: the one decoding of JSON
(a request body or an input line) and the one validation of a document, for the service and the command line."""
