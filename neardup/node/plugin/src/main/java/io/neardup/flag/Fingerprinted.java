package io.neardup.flag;

import io.neardup.fingerprint.FieldNames;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What verification, the drift guard and the candidate rule read of one document: its fingerprints (seed 0 first,
 * as 64-bit patterns), its shingle sketch, the exact hash of its content characters, its status and its metadata
 * signature ({@code Comparable} of {@code ingest/verify.py}). Never the text: flagging works from stored fields.
 *
 * <p>Status is kept as the stored string, not an enum, because Python compares strings and treats an unknown or
 * missing status ({@code ""}) by the same rules ({@code ok} vs anything else, {@code empty} never matches).
 *
 * <p>{@code allSeeds} is false for a document read from doc values ({@code Stored.from_doc_values}): only seed 0 is
 * known (the doc values of the fingerprint array come sorted, which loses the seeds' order). Verification and the
 * guard read seed 0 alone, so such a document verifies like a full one; the candidate rule needs every seed and
 * refuses it.
 */
public final class Fingerprinted {
    public static final String OK = "ok";
    public static final String TOO_SHORT = "too_short";
    public static final String EMPTY = "empty";

    private final long[] fingerprints;
    private final long[] sketch;
    private final String exact;
    private final String status;
    private final long[] meta;
    private final boolean allSeeds;

    /**
     * @param fingerprints seed 0 first (empty unless {@code ok})
     * @param sketch       sorted ascending, distinct, each an unsigned 32-bit value
     * @param exact        the exact hash ({@code ""} when unknown)
     * @param status       {@code ok}, {@code too_short}, {@code empty} (or whatever was stored)
     * @param meta         the metadata MinHash signature, or null without set fields
     * @param allSeeds     false when {@code fingerprints} holds seed 0 only
     */
    public Fingerprinted(long[] fingerprints, long[] sketch, String exact, String status, long[] meta, boolean allSeeds) {
        this.fingerprints = Objects.requireNonNull(fingerprints, "fingerprints").clone();
        this.sketch = checkedSketch(Objects.requireNonNull(sketch, "sketch").clone());
        this.exact = Objects.requireNonNull(exact, "exact");
        this.status = Objects.requireNonNull(status, "status");
        this.meta = meta == null ? null : meta.clone();
        this.allSeeds = allSeeds;
        if (allSeeds == false && this.fingerprints.length > 1) {
            throw new IllegalArgumentException("a document with seed 0 only has at most one fingerprint, not "
                + this.fingerprints.length);
        }
    }

    /**
     * A document from its stored {@code neardup} object ({@code _source}, as {@code schema.record_fields} writes it
     * and {@code Stored.from_hit} reads it): {@code fingerprint} (signed longs, seed 0 first, or one number),
     * {@code minhash} and {@code meta_minhash} (base64 of little-endian uint32), {@code exact}, {@code status}.
     * Missing values read as Python reads them: no fingerprints, an empty sketch, {@code ""}, no metadata.
     */
    public static Fingerprinted fromSource(Map<String, ?> neardup) {
        Object raw = neardup.get(FieldNames.FINGERPRINT);
        long[] fps;
        if (raw == null) {
            fps = new long[0];
        } else if (raw instanceof Number number) {
            fps = new long[] { number.longValue() };
        } else if (raw instanceof List<?> list) {
            fps = new long[list.size()];
            for (int i = 0; i < fps.length; i++) {
                if (list.get(i) instanceof Number number) {
                    fps[i] = number.longValue();
                } else {
                    throw new IllegalArgumentException("neardup.fingerprint[" + i + "] is not a number: " + list.get(i));
                }
            }
        } else {
            throw new IllegalArgumentException("neardup.fingerprint is neither a number nor a list: " + raw);
        }
        return new Fingerprinted(
            fps,
            decodeUint32(text(neardup, FieldNames.MINHASH), FieldNames.MINHASH),
            text(neardup, FieldNames.EXACT),
            text(neardup, FieldNames.STATUS),
            decodeMeta(text(neardup, FieldNames.META_MINHASH)),
            true
        );
    }

    /**
     * A candidate read from doc values ({@code Stored.from_doc_values}): seed 0 as 16 hex digits ({@code hex}, null
     * when the document has no fingerprint), the sketches in base64, exact hash and status; null reads as Python's
     * missing value.
     */
    public static Fingerprinted fromDocValues(String hex, String minhash, String exact, String status, String metaMinhash) {
        long[] fps = hex == null ? new long[0] : new long[] { parseHex(hex) };
        return new Fingerprinted(
            fps,
            decodeUint32(minhash == null ? "" : minhash, FieldNames.MINHASH),
            exact == null ? "" : exact,
            status == null ? "" : status,
            decodeMeta(metaMinhash),
            false
        );
    }

    /** Seed 0, the fingerprint verification compares; 0 when there is none (Python's {@code Record.fingerprint}). */
    public long fingerprint() {
        return fingerprints.length == 0 ? 0L : fingerprints[0];
    }

    /** How many seeds' fingerprints are known. */
    public int seeds() {
        return fingerprints.length;
    }

    /** The fingerprint of seed {@code index}. */
    public long fingerprint(int index) {
        return fingerprints[index];
    }

    public String exact() {
        return exact;
    }

    public String status() {
        return status;
    }

    public boolean isOk() {
        return OK.equals(status);
    }

    public boolean allSeeds() {
        return allSeeds;
    }

    public boolean hasMeta() {
        return meta != null;
    }

    /** The sketch itself, not a copy: package code reads it on every verification; nothing writes it. */
    long[] sketchValues() {
        return sketch;
    }

    /** The metadata signature itself (or null), for the same reason. */
    long[] metaValues() {
        return meta;
    }

    /** A copy of the sketch. */
    public long[] sketch() {
        return sketch.clone();
    }

    @Override
    public String toString() {
        return "Fingerprinted[" + status + ", seeds=" + fingerprints.length + (allSeeds ? "" : " (seed 0 only)")
            + ", sketch=" + sketch.length + ", exact=" + exact + (meta == null ? "" : ", meta=" + meta.length) + "]";
    }

    private static String text(Map<String, ?> neardup, String field) {
        Object value = neardup.get(field);
        return value == null ? "" : value.toString();
    }

    private static long parseHex(String hex) {
        try {
            return Long.parseUnsignedLong(hex, 16);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("neardup.hex is not a 64-bit hex value: " + hex, e);
        }
    }

    private static long[] decodeMeta(String base64) {
        return base64 == null || base64.isEmpty() ? null : decodeUint32(base64, "meta_minhash");
    }

    /** Little-endian uint32 values from base64 ({@code decode_sketch}); {@code ""} is no values. */
    static long[] decodeUint32(String base64, String field) {
        byte[] bytes;
        try {
            bytes = Base64.getDecoder().decode(base64);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("neardup." + field + " is not base64: " + e.getMessage(), e);
        }
        if (bytes.length % 4 != 0) {
            throw new IllegalArgumentException("neardup." + field + " holds " + bytes.length
                + " bytes, not a whole number of uint32 values");
        }
        long[] out = new long[bytes.length / 4];
        for (int i = 0; i < out.length; i++) {
            int at = 4 * i;
            out[i] = (bytes[at] & 0xFFL) | (bytes[at + 1] & 0xFFL) << 8 | (bytes[at + 2] & 0xFFL) << 16
                | (bytes[at + 3] & 0xFFL) << 24;
        }
        return out;
    }

    /**
     * The merge in {@link Similarity#jaccard} equals Python's set arithmetic only on sorted distinct values, which
     * every sketch neardup writes is; anything else is corrupt data, refused here rather than compared wrongly.
     */
    private static long[] checkedSketch(long[] sketch) {
        for (int i = 0; i < sketch.length; i++) {
            if (sketch[i] < 0 || sketch[i] > 0xFFFFFFFFL) {
                throw new IllegalArgumentException("sketch value " + sketch[i] + " at " + i + " is not an unsigned 32-bit value");
            }
            if (i > 0 && sketch[i] <= sketch[i - 1]) {
                throw new IllegalArgumentException("a sketch must be sorted ascending and distinct; value " + sketch[i]
                    + " at " + i + " follows " + sketch[i - 1] + " (" + Arrays.toString(Arrays.copyOf(sketch, Math.min(sketch.length, 8))) + "…)");
            }
        }
        return sketch;
    }
}
