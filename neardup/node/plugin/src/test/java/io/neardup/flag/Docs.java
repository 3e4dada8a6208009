package io.neardup.flag;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.LongStream;

/** Small hand-made documents for the tests of this package: sketches as ranges, so Jaccard values are easy to see. */
final class Docs {
    private Docs() {}

    /** The sorted sketch {@code from, from + 1, …, to - 1}. */
    static long[] range(long from, long to) {
        return LongStream.range(from, to).toArray();
    }

    /** The sketch of two ranges. */
    static long[] ranges(long from1, long to1, long from2, long to2) {
        return LongStream.concat(LongStream.range(from1, to1), LongStream.range(from2, to2)).toArray();
    }

    static Fingerprinted ok(long fingerprint, long[] sketch) {
        return new Fingerprinted(new long[] { fingerprint }, sketch, "e", Fingerprinted.OK, null, true);
    }

    /** An {@code ok} document of its own content: its exact hash is no other document's (so only blocks pair it). */
    static Fingerprinted ok(long[] fingerprints) {
        return new Fingerprinted(fingerprints, new long[0], "e" + DISTINCT.incrementAndGet(), Fingerprinted.OK, null, true);
    }

    /** An {@code ok} document with the exact hash {@code exact} (the same content characters as others with it). */
    static Fingerprinted ok(long[] fingerprints, String exact) {
        return new Fingerprinted(fingerprints, new long[0], exact, Fingerprinted.OK, null, true);
    }

    private static final AtomicLong DISTINCT = new AtomicLong();

    static Fingerprinted withMeta(long fingerprint, long[] sketch, long[] meta) {
        return new Fingerprinted(new long[] { fingerprint }, sketch, "e", Fingerprinted.OK, meta, true);
    }

    static Fingerprinted other(String status, String exact) {
        return new Fingerprinted(new long[0], new long[] { 5 }, exact, status, null, true);
    }

    /** Sorted distinct unsigned 32-bit values, from a narrow range in odd rounds so that values repeat. */
    static long[] randomSketch(Random random, int n, int round) {
        long bound = round % 2 == 0 ? 0x1_0000_0000L : 300;
        TreeSet<Long> values = new TreeSet<>();
        while (values.size() < Math.min(n, bound)) {
            values.add(random.nextLong(bound));
        }
        // the extremes of the unsigned range, where a signed reading would misorder
        if (round % 5 == 0) {
            values.add(0xFFFF_FFFFL);
            values.add(0x8000_0000L);
        }
        return values.stream().mapToLong(Long::longValue).toArray();
    }

    /** A sketch sharing a random part of {@code a}, with values of its own. */
    static long[] sharing(Random random, long[] a) {
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

    /** Where {@link #stored} puts the first value: after bytes of something else, as a doc value's header. */
    static final int STORED_AT = 3;

    /** {@code values} as a stored sketch: little-endian 32-bit, from {@link #STORED_AT}. */
    static byte[] stored(long[] values) {
        byte[] bytes = new byte[STORED_AT + 4 * values.length];
        for (int at = 0; at < values.length; at++) {
            for (int c = 0; c < 4; c++) {
                bytes[STORED_AT + 4 * at + c] = (byte) (values[at] >>> (8 * c));
            }
        }
        return bytes;
    }

    /** One random case of the sketch tests: the k of the estimate and two sketches. */
    record SketchPair(int k, long[] a, long[] b) {}

    /**
     * {@code rounds} random cases from {@code seed}: k small every 7th round, {@code b} sharing part of {@code a} every
     * other round, values repeating and the extremes of the unsigned range in some.
     */
    static List<SketchPair> sketchPairs(long seed, int rounds) {
        Random random = new Random(seed);
        List<SketchPair> pairs = new ArrayList<>(rounds);
        for (int round = 0; round < rounds; round++) {
            int k = round % 7 == 0 ? 1 + random.nextInt(8) : Similarity.SKETCH_SIZE;
            long[] a = randomSketch(random, random.nextInt(140), round);
            long[] b = round % 2 == 0 ? sharing(random, a) : randomSketch(random, random.nextInt(140), round + 1);
            pairs.add(new SketchPair(k, a, b));
        }
        return pairs;
    }
}
