package io.neardup.flag;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * An upper bound of {@link Similarity#jaccard} between one sketch and stored sketches, much cheaper than the estimate
 * itself, so that a check can refuse most candidates without computing it.
 *
 * <p>Why: a lookup in a large index meets about N·64/65,536 documents that share one block token by chance, and the
 * second check computed the estimate of each (a merge of two sorted lists of up to k values, every step depending on
 * the one before). In a profile of flagging into an index of 950,000 documents that merge was a fifth of the node's
 * CPU. A chance candidate shares almost no sketch value, which a test of each of its values against a bitmap of this
 * sketch's values shows in one pass of independent steps.
 *
 * <p>Why it is exact: the estimate counts values found in both sketches among the first {@code min(k, |A ∪ B|)} values
 * of their union, so it is at most {@code shared / min(k, max(|A|, |B|))}, where {@code shared} is the number of the
 * stored sketch's values also in this one. Counting the stored values whose bit is set in the bitmap counts each
 * shared value and perhaps some others (two values with the same low bits), never fewer; correctly rounded division
 * keeps the order, so a bound below a threshold means the estimate is below it too.
 */
public final class JaccardBound {
    private static final int BITS = 4096;
    private static final VarHandle LITTLE_ENDIAN_INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

    private final long[] bits = new long[BITS / 64];
    private final int size;
    private final int k;

    /**
     * @param sketch this side's sketch (distinct unsigned 32-bit values)
     * @param k the k of {@link Similarity#jaccard}
     */
    public JaccardBound(long[] sketch, int k) {
        for (long value : sketch) {
            int bit = (int) value & (BITS - 1);
            bits[bit >>> 6] |= 1L << bit;
        }
        this.size = sketch.length;
        this.k = k;
    }

    /**
     * A value at least {@link Similarity#jaccard}{@code (sketch, b, k)} for the stored sketch {@code b}: {@code bLength}
     * little-endian unsigned 32-bit values from {@code bytes[offset]}, distinct; 0 when either sketch is empty, as the
     * estimate is.
     */
    public double upperBound(byte[] bytes, int offset, int bLength) {
        if (size == 0 || bLength == 0) {
            return 0.0;
        }
        int shared = 0;
        for (int j = 0; j < bLength; j++) {
            int bit = (int) LITTLE_ENDIAN_INT.get(bytes, offset + 4 * j) & (BITS - 1);
            shared += (int) (bits[bit >>> 6] >>> bit) & 1;
        }
        return (double) shared / (double) Math.min(k, Math.max(size, bLength));
    }
}
