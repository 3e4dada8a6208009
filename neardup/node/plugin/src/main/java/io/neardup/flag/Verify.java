package io.neardup.flag;

import java.util.Optional;

/**
 * The second check of {@code ingest/verify.py}: is a candidate pair really a near-duplicate, and how close is it
 * ({@code verify}); and the drift guard, may a document still join a cluster whose canonical it has drifted from
 * ({@code close_to_canonical}). One port of both, so that flagging inside Elasticsearch and the {@code verify}
 * script accept exactly the pairs the Python service accepts.
 *
 * <p>Only seed 0 of each document is compared, which is why a candidate read from doc values (seed 0 only)
 * verifies as its full stored form does. Similarities are the doubles Python computes (same counts, one
 * division), so the thresholds cut at the same place.
 */
public final class Verify {
    private Verify() {}

    /**
     * The match of {@code a} and {@code b} under {@code config}, or empty. An {@code empty} document never matches;
     * a pair with any document not {@code ok} matches (distance 0, similarity 1) only with equal exact hashes and
     * equal statuses; otherwise the sketches decide ({@code min_jaccard}, or {@code near_jaccard} within
     * {@code max_distance} bits), or, with metadata on both and {@code mu < 1}, the combined score alone.
     */
    public static Optional<Match> verify(Fingerprinted a, Fingerprinted b, VerifyConfig config) {
        if (Fingerprinted.EMPTY.equals(a.status()) || Fingerprinted.EMPTY.equals(b.status())) {
            return Optional.empty();
        }
        if (a.isOk() == false || b.isOk() == false) {
            boolean same = a.exact().equals(b.exact()) && a.status().equals(b.status());
            return same ? Optional.of(new Match(0, 1.0)) : Optional.empty();
        }
        int distance = Long.bitCount(a.fingerprint() ^ b.fingerprint());
        if (config.useSketch() == false) {
            return distance <= config.maxDistance() ? Optional.of(new Match(distance, 1.0 - distance / 64.0)) : Optional.empty();
        }
        double similarity = Similarity.jaccard(a.sketchValues(), b.sketchValues(), Similarity.SKETCH_SIZE);
        if (combinedApplies(a, b, config)) {
            double score = Similarity.combined(similarity, Similarity.metaJaccard(a.metaValues(), b.metaValues()), config.mu());
            return score >= config.minCombined() ? Optional.of(new Match(distance, score)) : Optional.empty();
        }
        if (similarity >= config.minJaccard() || (distance <= config.maxDistance() && similarity >= config.nearJaccard())) {
            return Optional.of(new Match(distance, similarity));
        }
        return Optional.empty();
    }

    /**
     * The drift guard: may {@code doc}, matched to some member of a cluster, join it although that member is not the
     * cluster's canonical? It must still resemble the canonical weakly: sketches at {@code near_jaccard} or seed-0
     * fingerprints within {@code max_distance} bits (within twice that without sketches; the combined score at
     * {@code near_jaccard} with metadata on both). Documents not {@code ok} need the same exact hash, and neither may be
     * {@code empty}; unlike {@link #verify} the statuses need not be equal, as in Python.
     */
    public static boolean closeToCanonical(Fingerprinted doc, Fingerprinted canonical, VerifyConfig config) {
        if (doc.isOk() == false || canonical.isOk() == false) {
            return doc.exact().equals(canonical.exact())
                && Fingerprinted.EMPTY.equals(doc.status()) == false
                && Fingerprinted.EMPTY.equals(canonical.status()) == false;
        }
        int distance = Long.bitCount(doc.fingerprint() ^ canonical.fingerprint());
        if (config.useSketch() == false) {
            return distance <= 2 * config.maxDistance();
        }
        double similarity = Similarity.jaccard(doc.sketchValues(), canonical.sketchValues(), Similarity.SKETCH_SIZE);
        if (combinedApplies(doc, canonical, config)) {
            double score = Similarity.combined(similarity, Similarity.metaJaccard(doc.metaValues(), canonical.metaValues()), config.mu());
            return score >= config.nearJaccard();
        }
        return distance <= config.maxDistance() || similarity >= config.nearJaccard();
    }

    /**
     * The combined score decides when metadata counts ({@code mu < 1}) and both documents carry some: metadata on one
     * side only says nothing of the pair, so the content decides, as it does without any.
     */
    private static boolean combinedApplies(Fingerprinted a, Fingerprinted b, VerifyConfig config) {
        return config.mu() < 1.0 && a.hasMeta() && b.hasMeta();
    }
}
