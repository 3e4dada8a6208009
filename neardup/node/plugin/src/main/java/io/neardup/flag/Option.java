package io.neardup.flag;

import java.util.Comparator;
import java.util.Objects;

/**
 * A verified match of the document being assigned with an earlier document {@code target}, whose cluster's canonical
 * is {@code cluster} ({@code Option} of {@code ingest/cluster.py}).
 */
public record Option(String target, String cluster, Match match, OrderKey order) {
    /**
     * The ranking of verified matches ({@code preference}): higher similarity, then smaller Hamming distance, then the
     * earlier document. Similarities compare as numbers (Python's {@code -similarity}), so 0.0 and -0.0 tie.
     */
    public static final Comparator<Option> PREFERENCE = (a, b) -> {
        double x = a.match.similarity();
        double y = b.match.similarity();
        if (x != y) {
            return x > y ? -1 : 1;
        }
        int byDistance = Integer.compare(a.match.distance(), b.match.distance());
        return byDistance != 0 ? byDistance : a.order.compareTo(b.order);
    };

    public Option {
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(cluster, "cluster");
        Objects.requireNonNull(match, "match");
        Objects.requireNonNull(order, "order");
    }

    /** The target is its own cluster's canonical: joining it needs no drift guard. */
    public boolean targetIsCanonical() {
        return cluster.equals(target);
    }
}
