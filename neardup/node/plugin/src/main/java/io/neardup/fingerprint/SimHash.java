package io.neardup.fingerprint;

import java.util.Arrays;
import java.util.Map;

/**
 * Weighted SimHash over several seeds ({@code ingest/simhash.py}). Each weight is rounded to whole units of
 * 2<sup>-unitBits</sup> and capped, so the per-bit totals are exact integer sums: the same in any summation
 * order, hence the same bits as the Python core's matrix product.
 */
public final class SimHash {
    private SimHash() {}

    private static final long MAX_UNITS = 1L << 36;

    /** A weight in whole units ({@code quantize}: round half to even, capped at ±2<sup>36</sup>). */
    static long units(double weight, int unitBits) {
        double scaled = Math.rint(weight * (double) (1L << unitBits));
        return (long) Math.max(-MAX_UNITS, Math.min(MAX_UNITS, scaled));
    }

    /** One fingerprint per seed {@code 0..seeds-1}; bit j is set iff the signed sum of weights is above 0. */
    public static long[] fingerprints(Map<String, Double> weights, int seeds, int unitBits) {
        String[] words = new String[weights.size()];
        double[] values = new double[weights.size()];
        int i = 0;
        for (Map.Entry<String, Double> e : weights.entrySet()) {
            words[i] = e.getKey();
            values[i] = e.getValue();
            i++;
        }
        return fingerprints(new Features(words, values), seeds, unitBits);
    }

    /** {@link #fingerprints(Map, int, int)} of a document's features. */
    public static long[] fingerprints(Features features, int seeds, int unitBits) {
        long[] out = new long[seeds];
        int n = features.size();
        if (n == 0) {
            return out;
        }
        long[] base = new long[n];
        long[] units = new long[n];
        long total = 0;
        for (int i = 0; i < n; i++) {
            base[i] = Hashes.xxh3(features.words()[i]);
            units[i] = units(features.weights()[i], unitBits);
            total += units[i];
        }
        // per seed, the units of every feature summed by (nibble position, nibble value): 16 adds a feature,
        // no branch on the hash's bits; each bit's sum is then read off the 16 sums of its nibble position
        long[] byNibble = new long[16 * 16];
        for (int seed = 0; seed < seeds; seed++) {
            Arrays.fill(byNibble, 0L);
            for (int f = 0; f < n; f++) {
                long h = Hashes.reseed(base[f], seed);
                addNibbles(byNibble, (int) h, 0, units[f]);
                addNibbles(byNibble, (int) (h >>> 32), 128, units[f]);
            }
            long fp = 0;
            for (int p = 0; p < 16; p++) {
                fp |= nibbleBits(byNibble, p << 4, total) << (p << 2);
            }
            out[seed] = fp;
        }
        return out;
    }

    /**
     * The four fingerprint bits of one nibble position from its 16 sums {@code t[at..at+15]}: bit j is set iff
     * the sum over the nibble values with bit j set, doubled, exceeds the total. Those four sums share pairs
     * of neighbouring values, so they are added from the pairs.
     */
    private static long nibbleBits(long[] t, int at, long total) {
        long p23 = t[at | 2] + t[at | 3];
        long p45 = t[at | 4] + t[at | 5];
        long p67 = t[at | 6] + t[at | 7];
        long p89 = t[at | 8] + t[at | 9];
        long pAB = t[at | 10] + t[at | 11];
        long pCD = t[at | 12] + t[at | 13];
        long pEF = t[at | 14] + t[at | 15];
        long odd = t[at | 1] + t[at | 3] + t[at | 5] + t[at | 7] + t[at | 9] + t[at | 11] + t[at | 13] + t[at | 15];
        return above(odd, total)
            | above(p23 + p67 + pAB + pEF, total) << 1
            | above(p45 + p67 + pCD + pEF, total) << 2
            | above(p89 + pAB + pCD + pEF, total) << 3;
    }

    /** 1 when the features with a bit set outweigh those without ({@code 2 · setSum - total > 0}), else 0. */
    private static long above(long setSum, long total) {
        return 2 * setSum - total > 0 ? 1 : 0;
    }

    /**
     * Adds {@code u} to the sum of each nibble of {@code half} (eight nibble positions from {@code offset / 16}).
     * Spelled out rather than looped: this is the innermost step (16 seeds × 16 nibbles a feature), and the
     * straight line of 32-bit shifts runs about a quarter faster than the loop the JIT makes of it.
     */
    private static void addNibbles(long[] byNibble, int half, int offset, long u) {
        byNibble[offset | (half & 0xF)] += u;
        byNibble[offset | 0x10 | (half >>> 4 & 0xF)] += u;
        byNibble[offset | 0x20 | (half >>> 8 & 0xF)] += u;
        byNibble[offset | 0x30 | (half >>> 12 & 0xF)] += u;
        byNibble[offset | 0x40 | (half >>> 16 & 0xF)] += u;
        byNibble[offset | 0x50 | (half >>> 20 & 0xF)] += u;
        byNibble[offset | 0x60 | (half >>> 24 & 0xF)] += u;
        byNibble[offset | 0x70 | (half >>> 28)] += u;
    }
}
