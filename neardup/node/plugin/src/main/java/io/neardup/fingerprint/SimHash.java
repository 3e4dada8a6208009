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
        long[] setSum = new long[64];
        for (int seed = 0; seed < seeds; seed++) {
            java.util.Arrays.fill(setSum, 0L);
            for (int f = 0; f < n; f++) {
                long h = Hashes.reseed(base[f], seed);
                long u = units[f];
                while (h != 0) {
                    int bit = Long.numberOfTrailingZeros(h);
                    setSum[bit] += u;
                    h &= h - 1;
                }
            }
            long fp = 0;
            for (int bit = 0; bit < 64; bit++) {
                if (2 * setSum[bit] - total > 0) {
                    fp |= 1L << bit;
                }
            }
            out[seed] = fp;
        }
        return out;
    }
}
