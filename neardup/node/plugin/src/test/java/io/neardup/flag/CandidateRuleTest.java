package io.neardup.flag;

import static io.neardup.flag.Docs.ok;
import static io.neardup.flag.Docs.other;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The candidate rule's edges; every expected value is Python's {@code candidate_pairs} / {@code record_candidate_pairs}. */
class CandidateRuleTest {
    private static final CandidateRule RULE = CandidateRule.withMinShared(1);
    private static final long X = 0x1111_2222_3333_4444L;
    /** Blocks shared with X: doc 1 one, doc 2 one, doc 3 three; doc 4 is X again. */
    private static final List<Fingerprinted> SHARING = List.of(
        ok(new long[] { X }),
        ok(new long[] { 0x1111_AAAA_BBBB_CCCCL }),
        ok(new long[] { 0xDDDD_2222_EEEE_FFFFL }),
        ok(new long[] { 0x1111_2222_3333_0000L }),
        ok(new long[] { X }));

    @Test
    void tooShortDocumentsPairWithTheFirstOfTheirExactHash() {
        List<Fingerprinted> pool = List.of(other(Fingerprinted.TOO_SHORT, "hao"), other(Fingerprinted.TOO_SHORT, "hao"),
            other(Fingerprinted.TOO_SHORT, "buhao"), other(Fingerprinted.TOO_SHORT, "hao"), other(Fingerprinted.EMPTY, "hao"));
        assertArrayEquals(new int[][] { {}, { 0 }, {}, { 0 }, {} }, RULE.earlier(pool));
    }

    @Test
    void okDocumentsPairWithTheFirstOfTheirExactHashBeyondTheBlocksAndTheCap() {
        // the same content characters, fingerprints sharing no block (a title on one copy only moved them)
        long[] apart = { 0x0123_4567_89AB_CDEFL, 0xFEDC_BA98_7654_3210L, 0x0F0F_0F0F_0F0F_0F0FL };
        List<Fingerprinted> pool = List.of(ok(new long[] { apart[0] }, "same"), ok(new long[] { apart[1] }, "other"),
            ok(new long[] { apart[2] }, "same"), other(Fingerprinted.TOO_SHORT, "same"), ok(new long[] { apart[1] }, "same"),
            ok(new long[] { apart[0] }, ""), ok(new long[] { apart[2] }, ""));
        // doc 4 shares its blocks with doc 1 and its exact hash with doc 0; an unknown hash ("") pairs by blocks only
        assertArrayEquals(new int[][] { {}, {}, { 0 }, {}, { 0, 1 }, { 0 }, { 2 } }, RULE.earlier(pool));
        CandidateRule one = new CandidateRule(1, 256, 64, 1);
        assertArrayEquals(new int[] { 0, 1 }, one.earlier(pool)[4]);
        for (int end = 1; end <= pool.size(); end++) {
            assertArrayEquals(RULE.earlier(pool.subList(0, end))[end - 1], RULE.ofLast(pool.subList(0, end)));
        }
    }

    @Test
    void theCapKeepsTheMostSharedThenTheNearer() {
        CandidateRule two = new CandidateRule(1, 256, 64, 2);
        assertArrayEquals(new int[][] { {}, { 0 }, { 0 }, { 0, 2 } }, two.earlier(SHARING.subList(0, 4)));
        assertArrayEquals(new int[][] { {}, { 0 }, { 0 }, { 0, 1, 2 }, { 0, 1, 2, 3 } }, RULE.earlier(SHARING));
    }

    @Test
    void minSharedCountsTablesAndIsClampedToThoseThereAre() {
        assertArrayEquals(new int[][] { {}, {}, {}, { 0 }, { 0, 3 } }, CandidateRule.withMinShared(2).earlier(SHARING));
        // 100 tokens cannot be shared with 1 seed: clamped to 4, which only the twin shares
        assertArrayEquals(new int[][] { {}, {}, {}, {}, { 0 } }, CandidateRule.withMinShared(100).earlier(SHARING));
    }

    @Test
    void eachDocumentIsPairedWithTheWindowBeforeIt() {
        List<Fingerprinted> same = IntStream.range(0, 70).mapToObj(k -> ok(new long[] { 0x1234_5678_9ABC_DEF0L })).toList();
        int[][] earlier = RULE.earlier(same);
        assertArrayEquals(IntStream.range(5, 69).toArray(), earlier[69]);
        assertArrayEquals(IntStream.range(0, 10).toArray(), earlier[10]);
    }

    @Test
    void aBucketOfMoreThan64IsSplit() {
        // documents sharing block 0 and nothing else, not even a 12-bit sub-block: 64 are paired whole, 65 not at all
        List<Fingerprinted> pool = new ArrayList<>();
        for (long k = 0; k < 65; k++) {
            pool.add(ok(new long[] { 0xABCDL << 48 | k << 36 | k << 24 | k << 12 | k }));
        }
        int[][] whole = RULE.earlier(pool.subList(0, 64));
        assertArrayEquals(IntStream.range(0, 63).toArray(), whole[63]);
        assertEquals(64 * 63 / 2, IntStream.range(0, 64).map(j -> whole[j].length).sum());
        int[][] split = RULE.earlier(pool);
        assertEquals(0, IntStream.range(0, 65).map(j -> split[j].length).sum());
    }

    @Test
    void anOversizedBucketIsSplitBySubBlocks() {
        // 257 documents with block 0 equal; of the other 48 bits only docs 0 and 256 share a 12-bit sub-block
        // (and block 3, by the way)
        List<Fingerprinted> pool = new ArrayList<>();
        for (long k = 0; k < 257; k++) {
            long rest = k << 36 | k << 24 | k << 12 | (k == 256 ? 0 : k);
            pool.add(ok(new long[] { 0xABCDL << 48 | rest }));
        }
        int[][] split = RULE.earlier(pool);
        assertArrayEquals(new int[] { 0 }, split[256]);
        assertEquals(1, IntStream.range(0, 257).map(j -> split[j].length).sum());
        // not split (max_bucket 300): the window of 64 before each, and for doc 256 the 64 nearest of its 65
        // one-table candidates (doc 0 through block 3 falls out of the cap)
        int[][] whole = new CandidateRule(1, 300, 64, 64).earlier(pool);
        assertArrayEquals(IntStream.range(192, 256).toArray(), whole[256]);
        assertArrayEquals(IntStream.range(36, 100).toArray(), whole[100]);
    }

    @Test
    void documentsWithSeedZeroOnlyCannotProposeCandidates() {
        Fingerprinted fromDocValues = new Fingerprinted(new long[] { X }, new long[0], "e", Fingerprinted.OK, null, false);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> RULE.earlier(List.of(ok(new long[] { X }), fromDocValues)));
        assertEquals("document 1 of the pool has seed 0 only (read from doc values); the candidate rule needs every"
            + " seed's blocks", e.getMessage());
    }
}
