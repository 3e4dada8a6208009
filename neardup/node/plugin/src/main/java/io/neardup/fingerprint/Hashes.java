package io.neardup.fingerprint;

import java.nio.charset.StandardCharsets;
import net.openhft.hashing.LongHashFunction;

/** The 64-bit hashes of the Python core: XXH3-64 with seed 0 (python-xxhash's {@code xxh3_64}) and splitmix64. */
public final class Hashes {
    private Hashes() {}

    private static final LongHashFunction XXH3 = LongHashFunction.xx3();
    /** The golden-ratio constant splitmix64 adds, and the seed salt of {@link #reseed}. */
    public static final long GOLDEN = 0x9E3779B97F4A7C15L;

    /** XXH3-64 of the UTF-8 bytes of {@code text} ({@code xxhash.xxh3_64_intdigest(text.encode())}). */
    public static long xxh3(String text) {
        return XXH3.hashBytes(text.getBytes(StandardCharsets.UTF_8));
    }

    /** {@code xxh3_64_hexdigest}: sixteen lowercase hex digits. */
    public static String xxh3Hex(String text) {
        return hex(xxh3(text));
    }

    /** Sixteen lowercase hex digits of the unsigned value. */
    public static String hex(long value) {
        String digits = Long.toHexString(value);
        return "0".repeat(16 - digits.length()) + digits;
    }

    /** The splitmix64 mixer ({@code ingest/bits.py} {@code splitmix64}). */
    public static long splitmix64(long x) {
        x += GOLDEN;
        x = (x ^ (x >>> 30)) * 0xBF58476D1CE4E5B9L;
        x = (x ^ (x >>> 27)) * 0x94D049BB133111EBL;
        return x ^ (x >>> 31);
    }

    /** The feature hash for {@code seed}: the XXH3 value itself for seed 0, else a splitmix64 remix. */
    public static long reseed(long hash, int seed) {
        return seed == 0 ? hash : splitmix64(hash ^ (seed * GOLDEN));
    }
}
