package io.neardup.flag;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

/**
 * {@link CandidateRule#ofLast} gives the last document exactly the candidates {@link CandidateRule#earlier} gives it,
 * on random pools built to reach every branch: copies and near-copies (shared blocks), floods past the bucket bound
 * (sub-block splits), the window and the cap, equal exact hashes, too-short and empty documents, several
 * {@code min_shared}.
 */
final class CandidateRuleLastTest {

    private static long nearCopy(long value, Random random, int flips) {
        for (int f = 0; f < flips; f++) {
            value ^= 1L << random.nextInt(64);
        }
        return value;
    }

    private static List<Fingerprinted> pool(Random random, int size, int seeds) {
        List<Fingerprinted> out = new ArrayList<>();
        long[] base = new long[seeds];
        for (int s = 0; s < seeds; s++) {
            base[s] = random.nextLong();
        }
        for (int k = 0; k < size; k++) {
            int kind = random.nextInt(10);
            if (kind == 0) {
                out.add(new Fingerprinted(new long[0], new long[0], "x" + random.nextInt(3), Fingerprinted.TOO_SHORT, null, true));
                continue;
            }
            if (kind == 1) {
                out.add(new Fingerprinted(new long[0], new long[0], "", Fingerprinted.EMPTY, null, true));
                continue;
            }
            long[] fps = new long[seeds];
            for (int s = 0; s < seeds; s++) {
                fps[s] = kind < 6 ? nearCopy(base[s], random, random.nextInt(12)) : random.nextLong();
            }
            // a few exact hashes, so that copies of the same content characters are paired by them too
            out.add(new Fingerprinted(fps, new long[0], "e" + random.nextInt(6), Fingerprinted.OK, null, true));
        }
        return out;
    }

    @Test
    void ofLastEqualsTheLastRowOfEarlier() {
        Random random = new Random(11);
        int compared = 0;
        for (int trial = 0; trial < 300; trial++) {
            int seeds = 1 + random.nextInt(4);
            List<Fingerprinted> pool = pool(random, 1 + random.nextInt(trial % 10 == 0 ? 400 : 60), seeds);
            int minShared = 1 + random.nextInt(6);
            CandidateRule rule = trial % 2 == 0
                ? CandidateRule.withMinShared(minShared)
                : new CandidateRule(minShared, 2 + random.nextInt(20), 1 + random.nextInt(8), 1 + random.nextInt(10));
            for (int end = Math.max(1, pool.size() - 5); end <= pool.size(); end++) {
                List<Fingerprinted> prefix = pool.subList(0, end);
                int[][] all = rule.earlier(prefix);
                assertArrayEquals(all[end - 1], rule.ofLast(prefix), "trial " + trial + ", pool of " + end);
                compared++;
            }
        }
        System.out.println("ofLast = earlier on " + compared + " pools");
    }

    @Test
    void aFloodOfCopiesIsSplitAndCappedAsEarlierDoes() {
        long[] fps = { 0x1234_5678_9ABC_DEF0L, 0x0FED_CBA9_8765_4321L };
        List<Fingerprinted> pool = new ArrayList<>();
        for (int k = 0; k < 600; k++) {
            pool.add(new Fingerprinted(fps, new long[0], "e", Fingerprinted.OK, null, true));
        }
        CandidateRule rule = CandidateRule.withMinShared(1);
        assertArrayEquals(rule.earlier(pool)[599], rule.ofLast(pool));
    }
}
