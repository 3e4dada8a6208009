package io.neardup.fingerprint;

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
        long[] out = new long[seeds];
        if (weights.isEmpty()) {
            return out;
        }
        int n = weights.size();
        long[] base = new long[n];
        long[] units = new long[n];
        long total = 0;
        int i = 0;
        for (Map.Entry<String, Double> e : weights.entrySet()) {
            base[i] = Hashes.xxh3(e.getKey());
            units[i] = units(e.getValue(), unitBits);
            total += units[i];
            i++;
        }
        // per seed, the units of every feature summed by (nibble position, nibble value): 16 adds a feature,
        // no branch on the hash's bits; each bit's sum is then read off the 16 sums of its nibble position
        long[] byNibble = new long[16 * 16];
        for (int seed = 0; seed < seeds; seed++) {
            java.util.Arrays.fill(byNibble, 0L);
            for (int f = 0; f < n; f++) {
                long h = Hashes.reseed(base[f], seed);
                long u = units[f];
                for (int p = 0; p < 16; p++) {
                    byNibble[(p << 4) | (int) ((h >>> (p << 2)) & 0xF)] += u;
                }
            }
            long fp = 0;
            for (int p = 0; p < 16; p++) {
                for (int j = 0; j < 4; j++) {
                    long setSum = 0;
                    for (int v = 0; v < 16; v++) {
                        if ((v >>> j & 1) != 0) {
                            setSum += byNibble[(p << 4) | v];
                        }
                    }
                    if (2 * setSum - total > 0) {
                        fp |= 1L << ((p << 2) + j);
                    }
                }
            }
            out[seed] = fp;
        }
        return out;
    }
}
