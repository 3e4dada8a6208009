package io.neardup.flag;

/**
 * The thresholds of the second check ({@code VerifyConfig} of {@code ingest/verify.py}); {@link #DEFAULT} has the
 * values of Python's {@code VerifyConfig()}, so flagging in Elasticsearch and the Python service accept the same
 * pairs unless someone configures them apart.
 *
 * @param maxDistance  Hamming distance (bits of the seed-0 fingerprints) under which a weak sketch agreement suffices
 * @param minJaccard   sketch Jaccard estimate that accepts a pair on its own
 * @param nearJaccard  the weak agreement needed within {@code maxDistance}; also the drift guard's threshold
 * @param useSketch    false: Hamming distance alone decides (similarity {@code 1 - distance / 64})
 * @param mu           weight of content against metadata in the combined score (1: content only)
 * @param minCombined  the combined score a pair needs when both documents carry metadata and {@code mu < 1}
 */
public record VerifyConfig(
    int maxDistance,
    double minJaccard,
    double nearJaccard,
    boolean useSketch,
    double mu,
    double minCombined
) {
    /** Python's {@code VerifyConfig()}. */
    public static final VerifyConfig DEFAULT = new VerifyConfig(3, 0.35, 0.2, true, 1.0, 0.55);

    public VerifyConfig {
        if (maxDistance < 0 || maxDistance > 64) {
            throw new IllegalArgumentException("max_distance must be in [0, 64], not " + maxDistance);
        }
        unit("min_jaccard", minJaccard);
        unit("near_jaccard", nearJaccard);
        unit("mu", mu);
        unit("min_combined", minCombined);
    }

    private static void unit(String name, double value) {
        if ((value >= 0.0 && value <= 1.0) == false) {
            throw new IllegalArgumentException(name + " must be in [0, 1], not " + value);
        }
    }
}
