"""``neardup eval``: labelled near-duplicate sets built from real text shipped in packages, and the
pairwise precision / recall of neardup against the baselines on them."""
