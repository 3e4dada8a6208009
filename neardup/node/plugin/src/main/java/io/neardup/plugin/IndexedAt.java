package io.neardup.plugin;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * The {@code neardup.indexed_at} of a document fingerprinted now, written as Python's {@code schema.timestamp}
 * writes it (ISO-8601 UTC, nine fraction digits, all of one length so text order is time order).
 *
 * <p>Why a clock of its own: document order ({@code indexed_at}, then {@code _id}) decides which of two
 * near-duplicates is the earlier one, so the documents this node fingerprints get strictly increasing times, in the
 * order it processes them, as Python's ingest gives each document of a batch its own time.
 */
final class IndexedAt {
    /** The field name under the target field ({@code INDEXED_AT} in {@code mappings/schema.py}). */
    static final String FIELD = io.neardup.fingerprint.FieldNames.INDEXED_AT;
    private static final DateTimeFormatter FORMAT = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSSSSS'Z'", Locale.ROOT)
        .withZone(ZoneOffset.UTC);

    private final LongSupplier epochNanos;
    private final AtomicLong last = new AtomicLong(Long.MIN_VALUE);

    IndexedAt(LongSupplier epochNanos) {
        this.epochNanos = epochNanos;
    }

    /** The wall clock of this JVM. */
    static IndexedAt system() {
        return new IndexedAt(() -> {
            Instant now = Instant.now();
            return now.getEpochSecond() * 1_000_000_000L + now.getNano();
        });
    }

    /** The next time: now, or one nanosecond after the last one given if the clock has not moved past it. */
    String next() {
        long now = epochNanos.getAsLong();
        return format(last.accumulateAndGet(now, (previous, current) -> Math.max(previous + 1, current)));
    }

    /**
     * {@code value} with nine fraction digits, as {@link #format} writes it (Python's
     * {@code schema.canonical_timestamp}): Elasticsearch renders a {@code date_nanos} doc value without the
     * fraction's trailing zeros, and a shorter fraction sorts after a longer one of the same prefix, so text order
     * would no longer be time order. A value of another shape is returned as it is.
     */
    static String canonical(String value) {
        int dot = value.lastIndexOf('.');
        if (value.endsWith("Z") == false || dot < 0) {
            return value;
        }
        String fraction = value.substring(dot + 1, value.length() - 1);
        if (fraction.isEmpty() || fraction.length() > 9 || fraction.chars().allMatch(c -> c >= '0' && c <= '9') == false) {
            return value;
        }
        return value.substring(0, dot + 1) + fraction + "0".repeat(9 - fraction.length()) + "Z";
    }

    static String format(long epochNanos) {
        return FORMAT.format(Instant.ofEpochSecond(Math.floorDiv(epochNanos, 1_000_000_000L), Math.floorMod(epochNanos, 1_000_000_000L)));
    }
}
