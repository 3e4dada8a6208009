package io.neardup.flag;

/**
 * A verified near-duplicate pair ({@code Match} of {@code ingest/verify.py}): the Hamming distance of the two seed-0
 * fingerprints and the similarity that decided the match (the sketch Jaccard estimate, the combined score with
 * metadata, or {@code 1 - distance / 64} without sketches). The similarity is kept at full double precision; only
 * the stored field is rounded ({@link Assignment#storedSimilarity()}).
 */
public record Match(int distance, double similarity) {
    public Match {
        if (distance < 0 || distance > 64) {
            throw new IllegalArgumentException("a Hamming distance of 64-bit fingerprints is in [0, 64], not " + distance);
        }
        if (Double.isFinite(similarity) == false) {
            throw new IllegalArgumentException("similarity must be a finite number, not " + similarity);
        }
    }
}
