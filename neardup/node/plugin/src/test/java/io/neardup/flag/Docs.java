package io.neardup.flag;

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

    static Fingerprinted ok(long[] fingerprints) {
        return new Fingerprinted(fingerprints, new long[0], "e", Fingerprinted.OK, null, true);
    }

    static Fingerprinted withMeta(long fingerprint, long[] sketch, long[] meta) {
        return new Fingerprinted(new long[] { fingerprint }, sketch, "e", Fingerprinted.OK, meta, true);
    }

    static Fingerprinted other(String status, String exact) {
        return new Fingerprinted(new long[0], new long[] { 5 }, exact, status, null, true);
    }
}
