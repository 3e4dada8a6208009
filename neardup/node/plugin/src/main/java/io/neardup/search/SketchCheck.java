package io.neardup.search;

import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.lucene.index.BinaryDocValues;
import org.apache.lucene.index.DocValues;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.SortedSetDocValues;
import org.apache.lucene.store.ByteArrayDataInput;
import org.apache.lucene.util.BytesRef;

import io.neardup.flag.JaccardBound;
import io.neardup.flag.Similarity;

/**
 * The second check of {@code ingest/verify.py} for two fingerprinted documents, against a candidate read from a
 * segment's doc values: its sketch from the binary doc values of {@code sketchField} (little-endian uint32, sorted,
 * distinct), its seed-0 fingerprint from the hex keyword {@code hexField}. A candidate passes when the bottom-k
 * Jaccard estimate reaches {@code minJaccard}, or when the fingerprints are within {@code maxDistance} bits and the
 * estimate reaches {@code nearJaccard}; the estimate is computed as the Python reference computes it (the same
 * integer counts, one double division). The {@code verify} script and the {@code neardup_blocks} query both run it.
 *
 * @param sketch the query document's sketch, ascending
 * @param fingerprint the query document's seed-0 fingerprint
 */
public record SketchCheck(
    String sketchField,
    String hexField,
    long[] sketch,
    long fingerprint,
    int maxDistance,
    double minJaccard,
    double nearJaccard,
    int sketchSize
) {
    /** Names of the parameters, as the {@code verify} script and the query's {@code verify} object take them. */
    public static final List<String> PARAMS = List.of(
        "sketch_field", "hex_field", "sketch", "fingerprint", "max_distance", "min_jaccard", "near_jaccard", "sketch_size"
    );

    /**
     * The largest {@code sketch_size}, and the most values a {@code sketch} may hold: 65,536, Elasticsearch's default
     * {@code index.max_terms_count}, the bound it puts on the values of one {@code terms} query. neardup's sketches
     * are bottom-128 ({@link Similarity#SKETCH_SIZE}), so this is 512 times what it sends; the bound is there so
     * that a request cannot make every shard hold and merge an unbounded list per candidate.
     */
    public static final int MAX_SKETCH_SIZE = 65_536;

    /** The largest unsigned 32-bit value: a sketch value is the upper half of a 64-bit hash. */
    private static final long MAX_SKETCH_VALUE = 0xFFFF_FFFFL;

    /**
     * What every check must be, however it was made (the parameters of a request, or the flag pipeline's own
     * settings): each refusal names the parameter, so a bad request is a 400 that says what to change instead of a
     * check that silently accepts nothing (a NaN estimate for {@code sketch_size} 0, an unsorted sketch) or
     * everything.
     */
    public SketchCheck {
        if (sketchField == null || hexField == null || sketch == null) {
            throw new IllegalArgumentException("verify needs params [sketch_field], [hex_field], [sketch] and [fingerprint]");
        }
        if (sketch.length > MAX_SKETCH_SIZE) {
            throw new IllegalArgumentException("verify param [sketch] holds " + sketch.length + " values, more than the "
                + MAX_SKETCH_SIZE + " a sketch may hold");
        }
        for (int i = 0; i < sketch.length; i++) {
            if (sketch[i] < 0 || sketch[i] > MAX_SKETCH_VALUE) {
                throw new IllegalArgumentException("verify param [sketch] must hold unsigned 32-bit values (0 to "
                    + MAX_SKETCH_VALUE + "), and item " + i + " is " + sketch[i]);
            }
            // the estimate merges two ascending lists of distinct values: out of order, it would count nothing shared
            if (i > 0 && sketch[i] <= sketch[i - 1]) {
                throw new IllegalArgumentException("verify param [sketch] must be distinct values in ascending order (a "
                    + "bottom-k sketch), and item " + i + " (" + sketch[i] + ") is not above item " + (i - 1) + " ("
                    + sketch[i - 1] + ")");
            }
        }
        if (maxDistance < 0 || maxDistance > 64) {
            throw new IllegalArgumentException("verify param [max_distance] must be in [0, 64] (bits of a 64-bit "
                + "fingerprint), not " + maxDistance);
        }
        unit("min_jaccard", minJaccard);
        unit("near_jaccard", nearJaccard);
        if (sketchSize < 1 || sketchSize > MAX_SKETCH_SIZE) {
            throw new IllegalArgumentException("verify param [sketch_size] must be in [1, " + MAX_SKETCH_SIZE
                + "] (the k of the bottom-k sketches; neardup's is " + Similarity.SKETCH_SIZE + "), not " + sketchSize);
        }
    }

    private static void unit(String name, double value) {
        if ((value >= 0.0 && value <= 1.0) == false) { // NaN too
            throw new IllegalArgumentException("verify param [" + name + "] must be in [0, 1], not " + value);
        }
    }

    /**
     * From the {@code verify} script's parameters ({@link #PARAMS}; the thresholds default to Python's). An empty
     * {@code sketch} is taken: the Python side sends the stored sketch of a document that has none (a document
     * written without its {@code minhash}), and as in {@code ingest/verify.py} it then estimates 0 against every
     * candidate, so only thresholds of 0 accept one.
     */
    public static SketchCheck fromParams(Map<String, ?> params) {
        Object sketchField = params.get("sketch_field");
        Object hexField = params.get("hex_field");
        Object sketch = params.get("sketch");
        Object fingerprint = params.get("fingerprint");
        if (sketchField == null || hexField == null || sketch == null || fingerprint == null) {
            throw new IllegalArgumentException("verify needs params [sketch_field], [hex_field], [sketch] and [fingerprint]");
        }
        return new SketchCheck(
            string(params, "sketch_field"),
            string(params, "hex_field"),
            sketchOf(sketch),
            fingerprintOf(fingerprint),
            (int) wholeNumber(params, "max_distance", 3, 0, 64),
            fraction(params, "min_jaccard", 0.35),
            fraction(params, "near_jaccard", 0.2),
            (int) wholeNumber(params, "sketch_size", Similarity.SKETCH_SIZE, 1, MAX_SKETCH_SIZE)
        );
    }

    /** The parameters that make this check again ({@link #fromParams}), in the order of {@link #PARAMS}. */
    public Map<String, Object> toParams() {
        List<Long> values = new ArrayList<>(sketch.length);
        for (long value : sketch) {
            values.add(value);
        }
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("sketch_field", sketchField);
        params.put("hex_field", hexField);
        params.put("sketch", values);
        params.put("fingerprint", fingerprint);
        params.put("max_distance", maxDistance);
        params.put("min_jaccard", minJaccard);
        params.put("near_jaccard", nearJaccard);
        params.put("sketch_size", sketchSize);
        return params;
    }

    private static String string(Map<String, ?> params, String name) {
        Object value = params.get(name);
        if (value instanceof String text) {
            return text;
        }
        throw new IllegalArgumentException("verify param [" + name + "] must be a field name (a string), not [" + value + "]");
    }

    private static double fraction(Map<String, ?> params, String name, double otherwise) {
        Object value = params.get(name);
        if (value == null) {
            return otherwise;
        }
        if (value instanceof Number number) {
            return number.doubleValue(); // its range is the constructor's check
        }
        throw new IllegalArgumentException("verify param [" + name + "] must be a number in [0, 1], not [" + value + "]");
    }

    private static long wholeNumber(Map<String, ?> params, String name, long otherwise, long min, long max) {
        Object value = params.get(name);
        if (value == null) {
            return otherwise;
        }
        return wholeNumber(value, "verify param [" + name + "]", min, max);
    }

    /** 2^53: every whole double up to it is exactly the number written, none much above it is sure to be. */
    private static final double EXACT_DOUBLE = 0x1p53;

    /**
     * {@code value} as a whole number in {@code [min, max]}, or a refusal naming {@code what}. Integer types are
     * taken as they are; a floating-point number only when it is whole and exact (at most 2^53 in size), so that
     * {@code 1.7} is refused instead of cut to 1 and {@code 1.5e19} instead of clamped to {@link Long#MAX_VALUE}.
     */
    public static long wholeNumber(Object value, String what, long min, long max) {
        long whole;
        if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
            whole = ((Number) value).longValue();
        } else if (value instanceof BigInteger big) {
            if (big.bitLength() > 63) {
                throw new IllegalArgumentException(what + " must be in [" + min + ", " + max + "], not " + big);
            }
            whole = big.longValue();
        } else if (value instanceof Double || value instanceof Float) {
            double number = ((Number) value).doubleValue();
            if (number != Math.rint(number) || Math.abs(number) > EXACT_DOUBLE) {
                throw new IllegalArgumentException(what + " must be a whole number, not " + value);
            }
            whole = (long) number;
        } else {
            throw new IllegalArgumentException(what + " must be a whole number, not "
                + (value == null ? "null" : value instanceof String ? "the string [" + value + "]" : "[" + value + "]"));
        }
        if (whole < min || whole > max) {
            throw new IllegalArgumentException(what + " must be in [" + min + ", " + max + "], not " + whole);
        }
        return whole;
    }

    /** -2^63 and 2^64 - 1: the least signed and the largest unsigned 64-bit value. */
    private static final BigInteger MIN_SIGNED_64 = BigInteger.valueOf(Long.MIN_VALUE);
    private static final BigInteger MAX_UNSIGNED_64 = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);

    /**
     * A 64-bit fingerprint: a whole number from -2^63 to 2^64 - 1, the values above {@link Long#MAX_VALUE} read as
     * unsigned (their two's complement). The Python side sends it as a signed long ({@code to_signed}), as it is
     * stored in {@code neardup.fingerprint}; the unsigned form is taken too, since it is the same 64 bits. A hex
     * string is refused rather than parsed: no caller sends one, and taking it would make {@code "10"} ambiguous.
     */
    public static long fingerprintOf(Object value) {
        return fingerprintOf(value, "verify param [fingerprint]");
    }

    private static long fingerprintOf(Object value, String what) {
        if (value instanceof BigInteger big) {
            if (big.compareTo(MIN_SIGNED_64) < 0 || big.compareTo(MAX_UNSIGNED_64) > 0) {
                throw new IllegalArgumentException(what + " must be a 64-bit fingerprint, a whole number from -2^63 to "
                    + "2^64 - 1, not " + big);
            }
            return big.longValue(); // the low 64 bits, which within that range are the fingerprint itself
        }
        if (value instanceof Double || value instanceof Float) {
            throw new IllegalArgumentException(what + " must be a whole number (a 64-bit fingerprint is not exact as a "
                + "floating-point number), not " + value);
        }
        if (value instanceof String text) {
            throw new IllegalArgumentException(what + " must be a whole number (the signed 64-bit value, as "
                + "neardup.fingerprint stores it), not the string [" + text + "]");
        }
        return wholeNumber(value, what, Long.MIN_VALUE, Long.MAX_VALUE);
    }

    /** The {@code sketch} parameter: a list of distinct ascending unsigned 32-bit values (checked by the constructor). */
    static long[] sketchOf(Object value) {
        if (!(value instanceof List<?> list)) {
            throw new IllegalArgumentException("verify param [sketch] must be a list of unsigned 32-bit values in "
                + "ascending order, not " + (value instanceof String ? "the string [" + value + "]" : "[" + value + "]"));
        }
        if (list.size() > MAX_SKETCH_SIZE) {
            throw new IllegalArgumentException("verify param [sketch] holds " + list.size() + " values, more than the "
                + MAX_SKETCH_SIZE + " a sketch may hold");
        }
        long[] out = new long[list.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = wholeNumber(list.get(i), "verify param [sketch] item " + i, 0, MAX_SKETCH_VALUE);
        }
        return out;
    }

    /**
     * A number or a list of numbers as longs, each a whole number within the signed or unsigned 64-bit range (as
     * {@link #fingerprintOf} takes one); anything else as none.
     */
    public static long[] toLongs(Object value) {
        if (value instanceof Number) {
            return new long[] { fingerprintOf(value, "the value") };
        }
        if (value instanceof List<?> list) {
            long[] out = new long[list.size()];
            for (int i = 0; i < out.length; i++) {
                Object item = list.get(i);
                if (item instanceof Number == false) {
                    throw new IllegalArgumentException("a list of whole numbers was expected, and item " + i + " is "
                        + (item == null ? "null" : item.getClass().getSimpleName()));
                }
                out[i] = fingerprintOf(item, "item " + i);
            }
            return out;
        }
        return new long[0];
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof SketchCheck that
            && sketchField.equals(that.sketchField)
            && hexField.equals(that.hexField)
            && Arrays.equals(sketch, that.sketch)
            && fingerprint == that.fingerprint
            && maxDistance == that.maxDistance
            && Double.compare(minJaccard, that.minJaccard) == 0
            && Double.compare(nearJaccard, that.nearJaccard) == 0
            && sketchSize == that.sketchSize;
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(sketch) * 31 + Long.hashCode(fingerprint) + sketchField.hashCode() + 7 * hexField.hashCode();
    }

    /** The check over one segment's documents; each is read once, in increasing order of document. */
    public Leaf open(LeafReader reader) throws IOException {
        return new Leaf(DocValues.getBinary(reader, sketchField), DocValues.getSortedSet(reader, hexField),
            new JaccardBound(sketch, sketchSize));
    }

    /** {@link SketchCheck} positioned on one segment: ask about its documents in increasing order. */
    public final class Leaf {
        private final BinaryDocValues sketches;
        private final SortedSetDocValues hexes;
        private final JaccardBound bound;
        /** below this estimate nothing passes */
        private final double lowest = Math.min(minJaccard, nearJaccard);

        private Leaf(BinaryDocValues sketches, SortedSetDocValues hexes, JaccardBound bound) {
            this.sketches = sketches;
            this.hexes = hexes;
            this.bound = bound;
        }

        /** Does document {@code doc} of the segment pass? */
        public boolean accepts(int doc) throws IOException {
            double similarity = estimate(doc);
            // the fingerprint is read only when the similarity alone does not decide: most candidates share a block
            // by chance, have a similarity near 0, and are refused without it
            if (similarity >= minJaccard) {
                return true;
            }
            if (similarity < nearJaccard || hexes.advanceExact(doc) == false) {
                return false;
            }
            BytesRef hex = hexes.lookupOrd(hexes.nextOrd());
            long other;
            try {
                other = Long.parseUnsignedLong(hex.utf8ToString(), 16);
            } catch (NumberFormatException e) {
                // a user's data, not a fault of the node: an IllegalArgumentException, which the search answers 400
                throw new IllegalArgumentException("verify param [hex_field] names [" + hexField + "], read as fingerprints "
                    + "of up to 16 hex digits, and a document holds [" + hex.utf8ToString() + "] there: name the field "
                    + "of the hex fingerprints, as neardup.hex holds them", e);
            }
            return Long.bitCount(fingerprint ^ other) <= maxDistance;
        }

        /**
         * The similarity estimate of document {@code doc}, or a value below {@code lowest} (its bound) when the bound
         * already refuses it. A document without a sketch estimates 0, as an empty sketch does in Python's
         * {@code jaccard}: refused unless a threshold is 0.
         */
        private double estimate(int doc) throws IOException {
            if (sketches.advanceExact(doc) == false) {
                return 0.0;
            }
            // a binary field's doc value: the number of values, then each value's length and bytes (sorted); the
            // first value, as the field's script doc values give it
            BytesRef raw = sketches.binaryValue();
            ByteArrayDataInput in = new ByteArrayDataInput(raw.bytes, raw.offset, raw.length);
            if (in.readVInt() == 0) {
                return 0.0;
            }
            int length = in.readVInt();
            double bound = this.bound.upperBound(raw.bytes, in.getPosition(), length / 4);
            if (bound < lowest) {
                return bound; // most candidates of a large index: a chance block match sharing no sketch value
            }
            return Similarity.jaccard(sketch, sketch.length, raw.bytes, in.getPosition(), length / 4, sketchSize);
        }
    }
}
