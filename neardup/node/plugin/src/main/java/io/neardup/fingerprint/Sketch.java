package io.neardup.fingerprint;

import java.util.Arrays;
import java.util.Base64;

/**
 * The bottom-k sketch of character 3-grams ({@code ingest/sketch.py} {@code shingle_sketch}): code points to
 * 3-gram integers, splitmix64, the upper 32 bits, the k smallest distinct values (unsigned order).
 */
public final class Sketch {
    private Sketch() {}

    public static final int SHINGLE = 3;
    public static final int SIZE = 128;

    /** The sorted distinct sketch values of {@code chars}, each an unsigned 32-bit value in a long. */
    public static long[] of(String chars) {
        int[] codes = codePoints(chars);
        if (codes.length == 0) {
            return new long[0];
        }
        if (codes.length < SHINGLE) {
            codes = Arrays.copyOf(codes, SHINGLE);
        }
        int n = codes.length - SHINGLE + 1;
        long[] mixed = new long[n];
        for (int i = 0; i < n; i++) {
            long gram = 0;
            for (int j = 0; j < SHINGLE; j++) {
                gram |= ((long) codes[i + j]) << (21 * (SHINGLE - 1 - j));
            }
            mixed[i] = Hashes.splitmix64(gram) >>> 32;
        }
        // filtering pays once the values are several times more than the sketch keeps
        if (n > 4 * SIZE) {
            long[] low = smallest(below(mixed, (2L * SIZE << 32) / n));
            if (low.length == SIZE) {
                return low;
            }
        }
        return smallest(mixed);
    }

    /**
     * The values under {@code bound}. The hashed shingles spread evenly over the 32 bits, so a bound at about
     * twice {@link #SIZE} expected values almost always keeps {@link #SIZE} distinct ones; when it does, they
     * are the sketch of all the values, and sorting them alone is much cheaper than sorting every value.
     */
    private static long[] below(long[] values, long bound) {
        long[] out = new long[values.length];
        int size = 0;
        for (long v : values) {
            if (v < bound) {
                out[size++] = v;
            }
        }
        return Arrays.copyOf(out, size);
    }

    /** The {@link #SIZE} smallest distinct {@code values} (all if fewer), ascending; sorts {@code values}. */
    private static long[] smallest(long[] values) {
        Arrays.sort(values);
        long[] out = new long[Math.min(values.length, SIZE)];
        int size = 0;
        for (int i = 0; i < values.length && size < SIZE; i++) {
            if (i == 0 || values[i] != values[i - 1]) {
                out[size++] = values[i];
            }
        }
        return Arrays.copyOf(out, size);
    }

    private static int[] codePoints(String text) {
        int[] out = new int[text.length()];
        int size = 0;
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            out[size++] = cp;
            i += Character.charCount(cp);
        }
        return Arrays.copyOf(out, size);
    }

    /** Base64 of the little-endian uint32 values: the {@code neardup.minhash} field. */
    public static String encode(long[] sketch) {
        byte[] bytes = new byte[sketch.length * 4];
        for (int i = 0; i < sketch.length; i++) {
            long v = sketch[i];
            bytes[4 * i] = (byte) v;
            bytes[4 * i + 1] = (byte) (v >>> 8);
            bytes[4 * i + 2] = (byte) (v >>> 16);
            bytes[4 * i + 3] = (byte) (v >>> 24);
        }
        return Base64.getEncoder().encodeToString(bytes);
    }
}
