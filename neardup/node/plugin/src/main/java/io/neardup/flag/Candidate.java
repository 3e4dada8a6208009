package io.neardup.flag;

import java.util.Objects;

/**
 * What flagging knows of an earlier document that the candidate rule (or the candidate search) proposed for a new
 * one: its id, its fingerprint fields (perhaps seed 0 only, from doc values), version, stored cluster and
 * {@code indexed_at} ({@code Stored} of {@code mappings/schema.py}).
 *
 * @param cluster the stored cluster, or null (or {@code ""}) for a document never assigned: it then counts as the
 *                canonical of its own cluster, as Python's {@code doc.cluster or doc.id}
 */
public record Candidate(String id, Fingerprinted doc, String version, String cluster, String indexedAt) {
    public Candidate {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(doc, "doc");
        Objects.requireNonNull(version, "version");
        Objects.requireNonNull(indexedAt, "indexedAt");
    }

    /** The cluster a new document joins through this one: the stored cluster, or its own id without one. */
    public String clusterOrId() {
        return cluster == null || cluster.isEmpty() ? id : cluster;
    }

    /** Its place in document order: {@code indexed_at}, then id. */
    public OrderKey order() {
        return new OrderKey(indexedAt, id);
    }
}
