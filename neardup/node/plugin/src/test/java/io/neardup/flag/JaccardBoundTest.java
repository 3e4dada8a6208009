package io.neardup.flag;

import static io.neardup.flag.Docs.STORED_AT;
import static io.neardup.flag.Docs.randomSketch;
import static io.neardup.flag.Docs.sketchPairs;
import static io.neardup.flag.Docs.stored;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** {@link JaccardBound} against {@link Similarity#jaccard} itself. */
class JaccardBoundTest {
    @Test
    void theBoundIsNeverBelowTheEstimate() {
        int compared = 0;
        int close = 0;
        for (Docs.SketchPair p : sketchPairs(20261126, 50_000)) {
            double estimate = Similarity.jaccard(p.a(), p.b(), p.k());
            double bound = new JaccardBound(p.a(), p.k()).upperBound(stored(p.b()), STORED_AT, p.b().length);
            assertTrue(bound >= estimate, "case " + compared + ": bound " + bound + " below the estimate " + estimate);
            compared++;
            close += bound - estimate < 0.05 && estimate > 0 ? 1 : 0;
        }
        assertEquals(50_000, compared);
        assertTrue(close > 1_000, "the bound is rarely close to an estimate above 0: " + close);
    }

    @Test
    void anEmptySketchBoundsAtZero() {
        assertEquals(0.0, new JaccardBound(new long[0], 128).upperBound(stored(new long[] { 1, 2 }), STORED_AT, 2));
        assertEquals(0.0, new JaccardBound(new long[] { 1, 2 }, 128).upperBound(stored(new long[0]), STORED_AT, 0));
    }

    @Test
    void equalSketchesBoundAtOne() {
        long[] a = randomSketch(new Random(3), 100, 2); // at most k values: each one counted, none more
        assertEquals(1.0, new JaccardBound(a, 128).upperBound(stored(a), STORED_AT, a.length));
    }

    @Test
    void unrelatedFullSketchesAreRefusedAtTheLowestThreshold() {
        // what the check is for: a chance block match of a large index shares no sketch value with the query
        Random random = new Random(11);
        int refused = 0;
        for (int round = 0; round < 10_000; round++) {
            long[] a = randomSketch(random, Similarity.SKETCH_SIZE, 2);
            long[] b = randomSketch(random, Similarity.SKETCH_SIZE, 2);
            refused += new JaccardBound(a, Similarity.SKETCH_SIZE).upperBound(stored(b), STORED_AT, b.length) < 0.2 ? 1 : 0;
        }
        assertEquals(10_000, refused);
    }
}
