package io.neardup.flag;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** {@link JaccardBound} against {@link Similarity#jaccard} itself. */
class JaccardBoundTest {
    @Test
    void theBoundIsNeverBelowTheEstimate() {
        Random random = new Random(20261126);
        int compared = 0;
        int close = 0;
        for (int round = 0; round < 50_000; round++) {
            int k = round % 7 == 0 ? 1 + random.nextInt(8) : Similarity.SKETCH_SIZE;
            long[] a = sketch(random, random.nextInt(140));
            long[] b = round % 2 == 0 ? overlapping(random, a) : sketch(random, random.nextInt(140));
            double estimate = Similarity.jaccard(a, b, k);
            double bound = new JaccardBound(a, k).upperBound(stored(b), 3, b.length);
            assertTrue(bound >= estimate, "round " + round + ": bound " + bound + " below the estimate " + estimate);
            compared++;
            close += bound - estimate < 0.05 && estimate > 0 ? 1 : 0;
        }
        assertEquals(50_000, compared);
        assertTrue(close > 1_000, "the bound is rarely close to an estimate above 0: " + close);
    }

    @Test
    void anEmptySketchBoundsAtZero() {
        assertEquals(0.0, new JaccardBound(new long[0], 128).upperBound(stored(new long[] { 1, 2 }), 3, 2));
        assertEquals(0.0, new JaccardBound(new long[] { 1, 2 }, 128).upperBound(stored(new long[0]), 3, 0));
    }

    @Test
    void equalSketchesBoundAtOne() {
        long[] a = sketch(new Random(3), 100); // at most k values: each one counted, none more
        assertEquals(1.0, new JaccardBound(a, 128).upperBound(stored(a), 3, a.length));
    }

    @Test
    void unrelatedFullSketchesAreRefusedAtTheLowestThreshold() {
        // what the check is for: a chance block match of a large index shares no sketch value with the query
        Random random = new Random(11);
        int refused = 0;
        for (int round = 0; round < 10_000; round++) {
            long[] a = sketch(random, Similarity.SKETCH_SIZE);
            long[] b = sketch(random, Similarity.SKETCH_SIZE);
            refused += new JaccardBound(a, Similarity.SKETCH_SIZE).upperBound(stored(b), 3, b.length) < 0.2 ? 1 : 0;
        }
        assertEquals(10_000, refused);
    }

    /** Sorted distinct values over the unsigned 32-bit range, its extremes included every few. */
    private static long[] sketch(Random random, int n) {
        TreeSet<Long> values = new TreeSet<>();
        while (values.size() < n) {
            values.add(random.nextLong(0x1_0000_0000L));
        }
        if (n > 2 && random.nextInt(5) == 0) {
            values.add(0xFFFF_FFFFL);
            values.add(0x8000_0000L);
        }
        return values.stream().mapToLong(Long::longValue).toArray();
    }

    /** A sketch holding a random share of {@code a}, with values of its own. */
    private static long[] overlapping(Random random, long[] a) {
        double keep = random.nextDouble();
        TreeSet<Long> values = new TreeSet<>();
        for (long v : a) {
            if (random.nextDouble() < keep) {
                values.add(v);
            }
        }
        int extra = random.nextInt(64);
        while (extra-- > 0) {
            values.add(random.nextLong(0x1_0000_0000L));
        }
        return values.stream().mapToLong(Long::longValue).toArray();
    }

    /** {@code values} as stored: little-endian 32-bit, after 3 bytes of something else. */
    private static byte[] stored(long[] values) {
        byte[] bytes = new byte[3 + 4 * values.length];
        for (int at = 0; at < values.length; at++) {
            for (int c = 0; c < 4; c++) {
                bytes[3 + 4 * at + c] = (byte) (values[at] >>> (8 * c));
            }
        }
        return bytes;
    }
}
