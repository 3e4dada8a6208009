package io.neardup.plugin;

import io.neardup.flag.VerifyConfig;

/**
 * How a {@code "flag": true} processor assigns clusters: the candidate search's cap and token threshold (the Python
 * service's {@code NEARDUP_MAX_CANDIDATES} and {@code NEARDUP_MIN_SHARED}, same defaults), how long an assigned
 * document stays in the node's window ({@code NEARDUP_RECENT_SECONDS}'s role), and the second check's thresholds
 * (Python's {@code VerifyConfig()}: not configurable here, so both sides accept the same pairs).
 *
 * @param maxCandidates the search's {@code size}, in [1, 10000] ({@code index.max_result_window}'s default)
 * @param minShared     how many of the 64 (seed, block) tokens a candidate shares, in [1, 64]
 * @param windowSeconds how long an assigned document stays a candidate for later ones on this node, in (0, 3600]
 */
record FlagSettings(int maxCandidates, int minShared, double windowSeconds, VerifyConfig verify) {
    static final int DEFAULT_MAX_CANDIDATES = 500;
    static final int DEFAULT_MIN_SHARED = 1;
    static final double DEFAULT_WINDOW_SECONDS = 5.0;
    static final int MAX_RESULT_WINDOW = 10_000;
    static final int TOKENS = 64;
    static final double MAX_WINDOW_SECONDS = 3600.0;

    FlagSettings {
        if (maxCandidates < 1 || maxCandidates > MAX_RESULT_WINDOW) {
            throw new IllegalArgumentException("max_candidates must be in [1, " + MAX_RESULT_WINDOW + "], not " + maxCandidates);
        }
        if (minShared < 1 || minShared > TOKENS) {
            throw new IllegalArgumentException("min_shared must be in [1, " + TOKENS + "], not " + minShared);
        }
        if ((windowSeconds > 0 && windowSeconds <= MAX_WINDOW_SECONDS) == false) {
            throw new IllegalArgumentException("window_seconds must be in (0, " + (int) MAX_WINDOW_SECONDS + "], not " + windowSeconds);
        }
    }

    static FlagSettings defaults() {
        return new FlagSettings(DEFAULT_MAX_CANDIDATES, DEFAULT_MIN_SHARED, DEFAULT_WINDOW_SECONDS, VerifyConfig.DEFAULT);
    }

    long windowNanos() {
        return (long) (windowSeconds * 1e9);
    }
}
