package io.neardup.flag;

import java.util.Objects;

/**
 * The outcome of flagging one document: the cluster it belongs to (named by the cluster's canonical document), the
 * verified match it joined through, and that match. A document with no joinable match is the canonical of a new
 * cluster named by its own id, with no {@code duplicate_of}, distance or similarity ({@code Assigned} of
 * {@code neardup/es/indexing.py}).
 */
public record Assignment(String cluster, String duplicateOf, Match match) {
    public Assignment {
        Objects.requireNonNull(cluster, "cluster");
        if ((duplicateOf == null) != (match == null)) {
            throw new IllegalArgumentException("a duplicate has both duplicate_of and a match, a canonical neither");
        }
    }

    /** The document starts its own cluster. */
    public static Assignment canonical(String id) {
        return new Assignment(id, null, null);
    }

    /** The document joins the cluster of {@code option}'s target (never the target itself: no chaining). */
    public static Assignment joined(Option option) {
        return new Assignment(option.cluster(), option.target(), option.match());
    }

    public boolean isDuplicate() {
        return duplicateOf != null;
    }

    /** The {@code distance} field: the match's distance, or null for a canonical. */
    public Integer storedDistance() {
        return match == null ? null : match.distance();
    }

    /** The {@code similarity} field as {@code schema.assignment_fields} writes it: rounded to 4 places, or null. */
    public Double storedSimilarity() {
        return match == null ? null : PyRound.round(match.similarity(), 4);
    }
}
