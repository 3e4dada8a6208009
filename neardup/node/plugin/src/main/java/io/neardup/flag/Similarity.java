package io.neardup.flag;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The similarity estimates of the second check, computed with the same integer counts and the same single float64
 * division as the Python reference, so both sides compare the same doubles against the thresholds:
 * {@code jaccard} of {@code ingest/sketch.py}, {@code meta_jaccard} and {@code combined} of
 * {@code ingest/metadata.py}.
 */
public final class Similarity {
    private Similarity() {}

    /** {@code SKETCH_SIZE}: the k of the bottom-k shingle sketch. */
    public static final int SKETCH_SIZE = 128;

    /**
     * Estimated Jaccard similarity of two bottom-k sketches (sorted ascending, distinct, unsigned 32-bit values):
     * among the first {@code k} values of their union, the share found in both; 0 when either is empty. A merge of
     * the two sorted lists, as the {@code verify} script does, equals Python's {@code union1d} and {@code isin}.
     */
    public static double jaccard(long[] a, long[] b, int k) {
        return jaccard(a, a.length, b, b.length, k);
    }

    /** {@link #jaccard(long[], long[], int)} of the first {@code aLength} and {@code bLength} values (reused buffers). */
    public static double jaccard(long[] a, int aLength, long[] b, int bLength, int k) {
        if (aLength == 0 || bLength == 0) {
            return 0.0;
        }
        int i = 0;
        int j = 0;
        int union = 0;
        int both = 0;
        while (union < k && (i < aLength || j < bLength)) {
            if (j >= bLength || (i < aLength && a[i] < b[j])) {
                i++;
            } else if (i >= aLength || b[j] < a[i]) {
                j++;
            } else {
                i++;
                j++;
                both++;
            }
            union++;
        }
        return (double) both / (double) union;
    }

    private static final VarHandle LITTLE_ENDIAN_INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

    /**
     * {@link #jaccard(long[], int, long[], int, int)} with {@code b} read in place: {@code bLength} little-endian
     * unsigned 32-bit values from {@code bytes[offset]} (a stored sketch's encoding). The second check runs this on
     * every candidate a lookup's blocks match, most of them chance matches of a large index, so it neither decodes
     * the stored sketch first nor branches on each step's comparison; the result is the same ({@code VerifyTest}
     * compares the two).
     */
    public static double jaccard(long[] a, int aLength, byte[] bytes, int offset, int bLength, int k) {
        if (aLength == 0 || bLength == 0) {
            return 0.0;
        }
        int i = 0;
        int j = 0;
        int union = 0;
        int both = 0;
        while (union < k && i < aLength && j < bLength) {
            long av = a[i];
            long bv = Integer.toUnsignedLong((int) LITTLE_ENDIAN_INT.get(bytes, offset + 4 * j));
            i += av <= bv ? 1 : 0;
            j += bv <= av ? 1 : 0;
            both += av == bv ? 1 : 0;
            union++;
        }
        // one list is used up: each further step of the union takes a value of the other, none in both
        union += Math.min(k - union, (aLength - i) + (bLength - j));
        return (double) both / (double) union;
    }

    /** Share of equal positions of two metadata MinHash signatures; 0 when either is missing or they differ in size. */
    public static double metaJaccard(long[] a, long[] b) {
        if (a == null || b == null || a.length != b.length || a.length == 0) {
            return 0.0;
        }
        int equal = 0;
        for (int i = 0; i < a.length; i++) {
            if (a[i] == b[i]) {
                equal++;
            }
        }
        return (double) equal / (double) a.length;
    }

    /** {@code mu * content + (1 - mu) * metadata}, rounded to 4 places as Python rounds. */
    public static double combined(double content, double metadata, double mu) {
        return PyRound.round(mu * content + (1.0 - mu) * metadata, 4);
    }
}
