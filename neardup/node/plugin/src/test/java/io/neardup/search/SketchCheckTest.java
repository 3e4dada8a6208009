package io.neardup.search;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.math.BigInteger;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.lucene.document.BinaryDocValuesField;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.SortedSetDocValuesField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.store.ByteArrayDataOutput;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.apache.lucene.util.BytesRef;
import org.junit.jupiter.api.Test;

/** {@link SketchCheck}'s parameters: what it takes, what it refuses (naming the parameter), and its reading of fields. */
class SketchCheckTest {
    private static Map<String, Object> params() {
        Map<String, Object> params = new HashMap<>();
        params.put("sketch_field", "neardup.minhash");
        params.put("hex_field", "neardup.hex");
        params.put("sketch", List.of(3L, 70_000L, 4_294_967_295L));
        params.put("fingerprint", -5L);
        return params;
    }

    private static Map<String, Object> with(String name, Object value) {
        Map<String, Object> params = params();
        if (value == null) {
            params.remove(name);
        } else {
            params.put(name, value);
        }
        return params;
    }

    private static void refused(Map<String, Object> params, String... parts) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SketchCheck.fromParams(params));
        for (String part : parts) {
            assertTrue(e.getMessage().contains(part), e.getMessage());
        }
    }

    /**
     * The sketch as the lookup sends it is taken (JSON numbers come as Integer, Long, BigInteger or Double: whole
     * ones whatever their type), and so is an empty one: a stored document without a sketch sends [], which
     * estimates 0 against every candidate, as in Python. Anything else is refused naming [sketch], where it gave 0
     * hits.
     */
    @Test
    void theSketchMustBeWhatTheLookupSends() {
        SketchCheck check = SketchCheck.fromParams(params());
        assertArrayEquals(new long[] { 3L, 70_000L, 4_294_967_295L }, check.sketch());
        assertEquals(check, SketchCheck.fromParams(with("sketch", List.of(3, 70_000.0, 4_294_967_295L))));
        assertEquals(check.toParams(), SketchCheck.fromParams(check.toParams()).toParams());
        assertEquals(0, SketchCheck.fromParams(with("sketch", List.of())).sketch().length);
        refused(with("sketch", null), "verify needs params", "[sketch]");
        refused(with("sketch", "abc"), "[sketch] must be a list", "the string [abc]");
        refused(with("sketch", 5), "[sketch] must be a list");
        refused(with("sketch", List.of(5L, 3L)), "[sketch] must be distinct values in ascending order", "item 1 (3)");
        refused(with("sketch", List.of(5L, 5L)), "[sketch] must be distinct values in ascending order");
        refused(with("sketch", List.of(-1L, 3L)), "[sketch] item 0", "[0, 4294967295]", "-1");
        refused(with("sketch", List.of(1L, 4_294_967_296L)), "[sketch] item 1", "4294967296");
        refused(with("sketch", List.of(1L, 2.5)), "[sketch] item 1 must be a whole number");
        refused(with("sketch", List.of(1L, "2")), "[sketch] item 1 must be a whole number", "the string [2]");
        refused(with("sketch", java.util.Arrays.asList(1L, null)), "[sketch] item 1 must be a whole number, not null");
    }

    /**
     * The ranges' extremes and the fingerprint signed (as Python's to_signed sends it) or as the same 64 bits
     * unsigned are taken; outside them each parameter is refused by name, where they gave a NaN estimate, 0 hits,
     * or a fingerprint clamped or cut to 64 bits.
     */
    @Test
    void outOfRangeParametersAreRefusedNamingThem() {
        SketchCheck check = SketchCheck.fromParams(params());
        assertEquals(-5L, check.fingerprint());
        assertEquals(3, check.maxDistance());
        assertEquals(128, check.sketchSize());
        assertEquals(-1L, SketchCheck.fromParams(with("fingerprint", new BigInteger("18446744073709551615"))).fingerprint());
        assertEquals(Long.MIN_VALUE, SketchCheck.fromParams(with("fingerprint", Long.MIN_VALUE)).fingerprint());
        Map<String, Object> edges = params();
        edges.put("max_distance", 64);
        edges.put("min_jaccard", 1);
        edges.put("near_jaccard", 0.0);
        edges.put("sketch_size", SketchCheck.MAX_SKETCH_SIZE);
        SketchCheck.fromParams(edges);
        refused(with("sketch_size", 0), "[sketch_size] must be in [1, 65536]", "not 0");
        refused(with("sketch_size", -3), "[sketch_size]", "not -3");
        refused(with("sketch_size", 1_000_000_000_000L), "[sketch_size]", "1000000000000");
        refused(with("sketch_size", 65_537), "[sketch_size]", "65537");
        refused(with("max_distance", 65), "[max_distance] must be in [0, 64]", "65");
        refused(with("max_distance", -1), "[max_distance] must be in [0, 64]", "-1");
        refused(with("max_distance", 2.5), "[max_distance] must be a whole number");
        refused(with("min_jaccard", 1.5), "[min_jaccard] must be in [0, 1]", "1.5");
        refused(with("min_jaccard", -0.1), "[min_jaccard] must be in [0, 1]");
        refused(with("near_jaccard", Double.NaN), "[near_jaccard] must be in [0, 1]", "NaN");
        refused(with("near_jaccard", "0.2"), "[near_jaccard] must be a number");
        refused(with("fingerprint", 1.5e19), "[fingerprint] must be a whole number", "floating-point");
        refused(with("fingerprint", BigInteger.ONE.shiftLeft(70)), "[fingerprint] must be a 64-bit fingerprint", "2^64 - 1");
        refused(with("fingerprint", BigInteger.ONE.shiftLeft(63).negate().subtract(BigInteger.ONE)), "[fingerprint]");
        refused(with("fingerprint", "ff00"), "[fingerprint] must be a whole number", "the string [ff00]");
        refused(with("fingerprint", null), "verify needs params");
        refused(with("sketch_field", 7), "[sketch_field] must be a field name");
    }

    /** The record's own checks: the flag pipeline builds it directly, from settings already checked alike. */
    @Test
    void theConstructorChecksToo() {
        assertThrows(IllegalArgumentException.class, () -> new SketchCheck("m", "h", new long[] { 2, 1 }, 0, 3, 0.35, 0.2, 128));
        assertThrows(IllegalArgumentException.class, () -> new SketchCheck("m", "h", new long[0], 0, 3, 0.35, 0.2, 0));
        new SketchCheck("m", "h", new long[0], 0, 3, 0.35, 0.2, 128);
    }

    @Test
    void hammingValuesAreWhole64BitNumbers() {
        assertArrayEquals(new long[] { -1L, 7L }, SketchCheck.toLongs(List.of(new BigInteger("18446744073709551615"), 7)));
        assertThrows(IllegalArgumentException.class, () -> SketchCheck.toLongs(List.of(1.5)));
        assertThrows(IllegalArgumentException.class, () -> SketchCheck.toLongs(BigInteger.ONE.shiftLeft(70)));
    }

    /** A binary field's doc value as Elasticsearch writes it: the number of values, then each one's length and bytes. */
    private static BytesRef binaryDocValue(long... sketch) {
        byte[] bytes = new byte[16 + 4 * sketch.length];
        ByteArrayDataOutput out = new ByteArrayDataOutput(bytes);
        try {
            out.writeVInt(1);
            out.writeVInt(4 * sketch.length);
            for (long value : sketch) {
                out.writeInt((int) value); // little-endian since Lucene 9, as the sketch is
            }
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        return new BytesRef(bytes, 0, out.getPosition());
    }

    private static Directory index(Document... docs) throws IOException {
        Directory dir = new ByteBuffersDirectory();
        try (IndexWriter writer = new IndexWriter(dir, new IndexWriterConfig())) {
            for (Document doc : docs) {
                writer.addDocument(doc);
            }
        }
        return dir;
    }

    private static Document doc(long[] sketch, String hex) {
        Document doc = new Document();
        if (sketch != null) {
            doc.add(new BinaryDocValuesField("m", binaryDocValue(sketch)));
        }
        doc.add(new SortedSetDocValuesField("h", new BytesRef(hex)));
        return doc;
    }

    /** A hex field holding something else than a fingerprint is the request's error (400), naming the field. */
    @Test
    void aHexFieldHoldingNoHexIsAnErrorNamingIt() throws IOException {
        long[] sketch = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
        try (Directory dir = index(doc(new long[] { 1, 2, 3, 40, 50, 60, 70, 80, 90, 100 }, "not-hex"));
                DirectoryReader reader = DirectoryReader.open(dir)) {
            LeafReader leaf = reader.leaves().get(0).reader();
            // estimate 0.3 / 17 values: not enough alone, enough near; the fingerprint decides and cannot be read
            SketchCheck check = new SketchCheck("m", "h", sketch, 0, 3, 0.9, 0.1, 128);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> check.open(leaf).accepts(0));
            assertTrue(e.getMessage().contains("[h]") && e.getMessage().contains("[not-hex]"), e.getMessage());
        }
    }

    /** A candidate without a sketch estimates 0, as Python's jaccard of an empty sketch: thresholds of 0 accept it. */
    @Test
    void aCandidateWithoutASketchEstimatesZero() throws IOException {
        try (Directory dir = index(doc(null, "0"), doc(new long[0], "0"), doc(new long[] { 1, 2 }, "ffffffffffffffff"));
                DirectoryReader reader = DirectoryReader.open(dir)) {
            LeafReader leaf = reader.leaves().get(0).reader();
            SketchCheck.Leaf strict = new SketchCheck("m", "h", new long[] { 1, 2 }, 0, 3, 0.35, 0.2, 128).open(leaf);
            assertFalse(strict.accepts(0));
            assertFalse(strict.accepts(1));
            assertTrue(strict.accepts(2));
            SketchCheck.Leaf near = new SketchCheck("m", "h", new long[] { 1, 2 }, 0, 3, 0.35, 0.0, 128).open(leaf);
            assertTrue(near.accepts(0), "within 3 bits, and an estimate of 0 reaches near_jaccard 0");
            assertTrue(near.accepts(1));
            SketchCheck.Leaf empty = new SketchCheck("m", "h", new long[0], 0, 3, 0.35, 0.2, 128).open(leaf);
            assertFalse(empty.accepts(2), "an empty query sketch estimates 0 against every candidate");
        }
    }
}
