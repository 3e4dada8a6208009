package io.neardup.flag;

import static io.neardup.flag.Docs.ok;
import static io.neardup.flag.Docs.STORED_AT;
import static io.neardup.flag.Docs.other;
import static io.neardup.flag.Docs.range;
import static io.neardup.flag.Docs.ranges;
import static io.neardup.flag.Docs.sketchPairs;
import static io.neardup.flag.Docs.stored;
import static io.neardup.flag.Docs.withMeta;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;

/** {@link Verify}, {@link Similarity} and {@link PyRound} on hand-made cases; every expected value is Python's. */
class VerifyTest {
    private static final VerifyConfig DEFAULT = VerifyConfig.DEFAULT;

    @Test
    void jaccardCountsTheFirstKValuesOfTheUnion() {
        assertEquals(0.4, Similarity.jaccard(new long[] { 1, 2, 3, 4 }, new long[] { 2, 3, 5 }, 128));
        assertEquals(0.5, Similarity.jaccard(new long[] { 1, 2, 3, 4 }, new long[] { 2, 3, 5, 6 }, 4));
        assertEquals(0.390625, Similarity.jaccard(range(0, 100), range(50, 150), 128));
        assertEquals(0.6666666666666666, Similarity.jaccard(range(0, 100), range(20, 120), 128));
        assertEquals(0.0, Similarity.jaccard(new long[0], range(0, 3), 128));
    }

    @Test
    void jaccardOfAStoredSketchReadInPlaceEqualsTheDecodedOne() {
        int compared = 0;
        int overlapping = 0;
        for (Docs.SketchPair p : sketchPairs(20261125, 20_000)) {
            double expected = Similarity.jaccard(p.a(), p.b(), p.k());
            double inPlace = Similarity.jaccard(p.a(), p.a().length, stored(p.b()), STORED_AT, p.b().length, p.k());
            assertEquals(expected, inPlace, "case " + compared);
            compared++;
            overlapping += expected > 0 ? 1 : 0;
        }
        assertEquals(20_000, compared);
        assertTrue(overlapping > 5_000, "too few overlapping sketches compared: " + overlapping);
    }

    @Test
    void nearDuplicatesNeedAWeakSketchAgreementWithinMaxDistance() {
        Fingerprinted x = ok(0, range(0, 100));
        long[] sketch = ranges(0, 30, 1000, 1070); // Jaccard 0.234375 with x: below min_jaccard, above near_jaccard
        assertEquals(Optional.of(new Match(3, 0.234375)), Verify.verify(x, ok(0b111, sketch), DEFAULT));
        assertEquals(Optional.empty(), Verify.verify(x, ok(0b1111, sketch), DEFAULT));
        assertEquals(Optional.of(new Match(16, 0.390625)), Verify.verify(x, ok(0xFFFF0000L, range(50, 150)), DEFAULT));
    }

    @Test
    void withoutSketchesTheHammingDistanceDecides() {
        VerifyConfig hamming = new VerifyConfig(3, 0.35, 0.2, false, 1.0, 0.55);
        assertEquals(Optional.of(new Match(3, 0.953125)), Verify.verify(ok(0, range(0, 100)), ok(0b111, range(500, 600)), hamming));
        assertEquals(Optional.empty(), Verify.verify(ok(0, range(0, 100)), ok(0b1111, range(0, 100)), hamming));
        assertTrue(Verify.closeToCanonical(ok(0, range(0, 1)), ok(0b111111, range(5, 6)), hamming));
        assertFalse(Verify.closeToCanonical(ok(0, range(0, 1)), ok(0b1111111, range(0, 1)), hamming));
    }

    @Test
    void documentsNotOkMatchByExactHashAndStatusAlone() {
        Fingerprinted shortText = other(Fingerprinted.TOO_SHORT, "h");
        assertEquals(Optional.of(new Match(0, 1.0)), Verify.verify(shortText, other(Fingerprinted.TOO_SHORT, "h"), DEFAULT));
        assertEquals(Optional.empty(), Verify.verify(shortText, other(Fingerprinted.TOO_SHORT, "g"), DEFAULT));
        Fingerprinted okSameHash = new Fingerprinted(new long[] { 1 }, new long[] { 5 }, "h", Fingerprinted.OK, null, true);
        assertEquals(Optional.empty(), Verify.verify(shortText, okSameHash, DEFAULT));
        assertEquals(Optional.empty(), Verify.verify(other(Fingerprinted.EMPTY, "h"), other(Fingerprinted.EMPTY, "h"), DEFAULT));
        // the guard asks for the exact hash only (not the status), and never an empty document
        assertTrue(Verify.closeToCanonical(shortText, okSameHash, DEFAULT));
        assertFalse(Verify.closeToCanonical(shortText, other(Fingerprinted.EMPTY, "h"), DEFAULT));
    }

    @Test
    void withMetadataTheCombinedScoreAloneDecides() {
        VerifyConfig mu = new VerifyConfig(3, 0.35, 0.2, true, 0.8, 0.55);
        Fingerprinted p = withMeta(0, range(0, 100), new long[] { 1, 2, 3, 4 });
        Fingerprinted q = withMeta(0, ranges(0, 50, 500, 550), new long[] { 1, 2, 3, 9 });
        // content 0.390625 (a match alone), metadata 0.75: combined 0.4625 < 0.55, though the fingerprints are equal
        assertEquals(Optional.empty(), Verify.verify(p, q, mu));
        assertTrue(Verify.closeToCanonical(p, q, mu));
        // metadata on one side only says nothing of the pair: the content decides, as without any
        Fingerprinted untagged = ok(0, ranges(0, 50, 500, 550));
        assertEquals(Optional.of(new Match(0, 0.390625)), Verify.verify(p, untagged, mu));
        assertEquals(Optional.of(new Match(0, 0.390625)), Verify.verify(untagged, p, mu));
        assertEquals(Optional.of(new Match(0, 0.390625)), Verify.verify(p, untagged, DEFAULT));
        assertEquals(0.55, Similarity.combined(0.5, 0.75, 0.8)); // 0.8 * 0.5 + 0.2 * 0.75 rounds to the threshold
    }

    @Test
    void roundingIsPythons() {
        assertEquals(2.67, PyRound.round(2.675, 2));
        assertEquals(0.0001, PyRound.round(0.00005, 4));
        assertEquals(0.1235, PyRound.round(0.12345, 4));
        assertEquals(0.0, PyRound.round(0.5, 0));
        assertEquals(2.0, PyRound.round(1.5, 0));
        assertEquals(0.3, PyRound.round(0.30000000000000004, 4));
        assertEquals(0.6667, new Assignment("a", "b", new Match(1, 2.0 / 3.0)).storedSimilarity());
    }

    @Test
    void storedFieldsDecodeAsPythonReadsThem() {
        // two uint32 values, little-endian: 1 and 4294967295
        Fingerprinted doc = Fingerprinted.fromDocValues("ffffffffffffffff", "AQAAAP////8=", null, null, null);
        assertEquals(-1L, doc.fingerprint());
        assertEquals(1, doc.seeds());
        assertFalse(doc.allSeeds());
        assertEquals(2, doc.sketch().length);
        assertEquals(4294967295L, doc.sketch()[1]);
        assertEquals("", doc.status());
        assertThrows(IllegalArgumentException.class, () -> Fingerprinted.fromDocValues(null, "AQAAAA==AQ", "e", "ok", null));
        assertThrows(IllegalArgumentException.class, () -> ok(0, new long[] { 3, 2 }));
    }
}
