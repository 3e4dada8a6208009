package io.neardup.search;

import java.io.IOException;
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

    /** From the {@code verify} script's parameters ({@link #PARAMS}; the thresholds default to Python's). */
    public static SketchCheck fromParams(Map<String, ?> params) {
        Object sketchField = params.get("sketch_field");
        Object hexField = params.get("hex_field");
        Object fingerprint = params.get("fingerprint");
        if (sketchField instanceof String == false || hexField instanceof String == false || fingerprint instanceof Number == false) {
            throw new IllegalArgumentException("verify needs params [sketch_field], [hex_field], [sketch] and [fingerprint]");
        }
        return new SketchCheck(
            (String) sketchField,
            (String) hexField,
            toLongs(params.get("sketch")),
            ((Number) fingerprint).longValue(),
            number(params, "max_distance", 3).intValue(),
            number(params, "min_jaccard", 0.35).doubleValue(),
            number(params, "near_jaccard", 0.2).doubleValue(),
            number(params, "sketch_size", Similarity.SKETCH_SIZE).intValue()
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

    private static Number number(Map<String, ?> params, String name, Number otherwise) {
        Object value = params.get(name);
        if (value == null) {
            return otherwise;
        }
        if (value instanceof Number number) {
            return number;
        }
        throw new IllegalArgumentException("verify param [" + name + "] must be a number, not [" + value + "]");
    }

    /** A number or a list of numbers as longs; anything else as none. */
    public static long[] toLongs(Object value) {
        if (value instanceof Number number) {
            return new long[] { number.longValue() };
        }
        if (value instanceof List<?> list) {
            long[] out = new long[list.size()];
            for (int i = 0; i < out.length; i++) {
                Object item = list.get(i);
                if (item instanceof Number == false) {
                    throw new IllegalArgumentException("a list of whole numbers was expected, and item " + i + " is "
                        + (item == null ? "null" : item.getClass().getSimpleName()));
                }
                out[i] = ((Number) item).longValue();
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
            if (sketches.advanceExact(doc) == false) {
                return false;
            }
            // a binary field's doc value: the number of values, then each value's length and bytes (sorted); the
            // first value, as the field's script doc values give it
            BytesRef raw = sketches.binaryValue();
            ByteArrayDataInput in = new ByteArrayDataInput(raw.bytes, raw.offset, raw.length);
            if (in.readVInt() == 0) {
                return false;
            }
            int length = in.readVInt();
            if (bound.upperBound(raw.bytes, in.getPosition(), length / 4) < lowest) {
                return false; // most candidates of a large index: a chance block match sharing no sketch value
            }
            double similarity = Similarity.jaccard(sketch, sketch.length, raw.bytes, in.getPosition(), length / 4, sketchSize);
            // the fingerprint is read only when the similarity alone does not decide: most candidates share a block
            // by chance, have a similarity near 0, and are refused without it
            if (similarity >= minJaccard) {
                return true;
            }
            if (similarity < nearJaccard || hexes.advanceExact(doc) == false) {
                return false;
            }
            long other = Long.parseUnsignedLong(hexes.lookupOrd(hexes.nextOrd()).utf8ToString(), 16);
            return Long.bitCount(fingerprint ^ other) <= maxDistance;
        }
    }
}
