package io.neardup.flag;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Which earlier documents of a pool are a document's candidates, for documents a search cannot see yet (a batch's
 * own and those written moments ago): the offline candidate rule of {@code ingest/cluster.py}
 * ({@code record_candidate_pairs} over {@code candidate_pairs}), ported step for step so that flagging proposes the
 * pairs the offline clustering proposes.
 *
 * <ul>
 *   <li>{@code ok} documents sharing a 16-bit block under the same seed are paired. Per (seed, block) table the
 *   documents are grouped by block value in pool order; each is paired with at most {@code window} earlier members of
 *   its group. A group of more than {@code maxBucket} members (boilerplate, a flood of copies) is split again by the
 *   four 12-bit sub-blocks of the other 48 bits: its pairs need an equal sub-block too, and count once per equal
 *   sub-block.
 *   <li>A pair's score is how often it was found; pairs found fewer than {@code minShared} times are dropped
 *   ({@code minShared} is clamped to [1, 4 × seeds]). Each document keeps the {@code maxCandidates} earlier ones
 *   with the highest score, the nearer one (later in the pool) first among equal scores.
 *   <li>An {@code ok} or {@code too_short} document is also paired with the first document of the pool with the same
 *   status and exact hash (with no other of that hash: all of them would tie, and the first one wins). For too-short
 *   documents that is their only rule; for {@code ok} ones it finds the copies with the same content characters whose
 *   fingerprints moved apart (a title on one copy only, or another one, or a text spaced out character by
 *   character). An unknown exact hash ({@code ""}) pairs with nothing.
 * </ul>
 *
 * <p>The rule is over the whole pool: whether a group is split depends on all its members, later ones included, so
 * the candidates of a document depend on the pool it is judged in, as in Python. The caller gives a pool of one
 * fingerprint version ({@code assign_batch} keeps only recent documents of the batch's versions); the rule does
 * not look at versions.
 */
public final class CandidateRule {
    /** The defaults of {@code ingest/cluster.py} (flagging's in-batch rule uses them all but {@code min_shared}). */
    public static final int DEFAULT_MAX_BUCKET = 64;
    public static final int DEFAULT_WINDOW = 64;
    public static final int DEFAULT_MAX_CANDIDATES = 64;
    public static final int DEFAULT_MIN_SHARED = 1;

    private static final int BLOCKS = 4;

    private final int minShared;
    private final int maxBucket;
    private final int window;
    private final int maxCandidates;

    public CandidateRule(int minShared, int maxBucket, int window, int maxCandidates) {
        if (maxBucket < 1 || window < 1 || maxCandidates < 1) {
            throw new IllegalArgumentException("max_bucket, window and max_candidates must be positive, not "
                + maxBucket + ", " + window + ", " + maxCandidates);
        }
        this.minShared = minShared;
        this.maxBucket = maxBucket;
        this.window = window;
        this.maxCandidates = maxCandidates;
    }

    /** The rule flagging applies: Python's defaults with the configured {@code min_shared}. */
    public static CandidateRule withMinShared(int minShared) {
        return new CandidateRule(minShared, DEFAULT_MAX_BUCKET, DEFAULT_WINDOW, DEFAULT_MAX_CANDIDATES);
    }

    /**
     * For every document of {@code pool} (in pool order: earlier documents first), the positions of its candidates
     * among the documents before it, ascending. Every {@code ok} document must carry all its seeds.
     */
    public int[][] earlier(List<Fingerprinted> pool) {
        int n = pool.size();
        int[][] out = new int[n][];
        int[] valid = okPositions(pool);
        if (valid.length > 1) {
            blockCandidates(pool, valid, out);
        }
        Map<String, Integer> firstExact = new HashMap<>();
        for (int row = 0; row < n; row++) {
            Fingerprinted doc = pool.get(row);
            if (pairsByExact(doc)) {
                Integer first = firstExact.putIfAbsent(doc.status() + "\u0000" + doc.exact(), row);
                if (first != null) {
                    out[row] = withPosition(out[row], first);
                }
            }
        }
        for (int row = 0; row < n; row++) {
            if (out[row] == null) {
                out[row] = new int[0];
            }
        }
        return out;
    }

    /** Whether {@code doc} is paired by its exact hash: {@code ok} or {@code too_short}, with a known hash. */
    private static boolean pairsByExact(Fingerprinted doc) {
        return (doc.isOk() || Fingerprinted.TOO_SHORT.equals(doc.status())) && doc.exact().isEmpty() == false;
    }

    /** The position of the first document before {@code last} that {@link #pairsByExact} pairs it with, or -1. */
    private static int firstSameExact(List<Fingerprinted> pool, int last) {
        Fingerprinted doc = pool.get(last);
        if (pairsByExact(doc) == false) {
            return -1;
        }
        for (int row = 0; row < last; row++) {
            Fingerprinted other = pool.get(row);
            if (other.status().equals(doc.status()) && other.exact().equals(doc.exact())) {
                return row;
            }
        }
        return -1;
    }

    /** The ascending positions {@code sorted} (null for none) with {@code position} among them. */
    private static int[] withPosition(int[] sorted, int position) {
        if (sorted == null) {
            return new int[] { position };
        }
        int at = Arrays.binarySearch(sorted, position);
        if (at >= 0) {
            return sorted;
        }
        int insert = -at - 1;
        int[] out = new int[sorted.length + 1];
        System.arraycopy(sorted, 0, out, 0, insert);
        out[insert] = position;
        System.arraycopy(sorted, insert, out, insert + 1, sorted.length - insert);
        return out;
    }

    /**
     * The candidates of the last document of {@code pool} alone: {@code earlier(pool)[pool.size() - 1]}, in time
     * linear in the pool (no table is sorted). For flagging one new document against a window of earlier ones, where
     * {@link #earlier} would redo the pairs of the whole window for every document (a flood of copies makes that
     * quadratic). The last document is the latest member of each of its groups, so its pairs are the {@code window}
     * latest members of each group it belongs to (of each equal sub-block in an oversized group).
     */
    public int[] ofLast(List<Fingerprinted> pool) {
        int last = pool.size() - 1;
        if (last < 0) {
            throw new IllegalArgumentException("the pool is empty");
        }
        Fingerprinted doc = pool.get(last);
        int sameExact = firstSameExact(pool, last);
        int[] alone = sameExact < 0 ? new int[0] : new int[] { sameExact };
        if (doc.isOk() == false) {
            return alone;
        }
        int[] valid = okPositions(pool);
        if (valid.length < 2) {
            return alone;
        }
        int width = 0;
        for (int row : valid) {
            width = Math.max(width, pool.get(row).seeds());
        }
        int[] count = new int[last];
        int[] group = new int[valid.length];
        int[] sub = new int[valid.length];
        for (int s = 0; s < width; s++) {
            long mine = s < doc.seeds() ? doc.fingerprint(s) : 0L;
            for (int block = 0; block < BLOCKS; block++) {
                int shift = 16 * (3 - block);
                long key = (mine >>> shift) & 0xFFFFL;
                int members = 0; // the earlier members of the document's group, in pool order
                for (int row : valid) {
                    if (row != last && ((seedOf(pool.get(row), s) >>> shift) & 0xFFFFL) == key) {
                        group[members++] = row;
                    }
                }
                if (members + 1 <= maxBucket) {
                    for (int t = Math.max(0, members - window); t < members; t++) {
                        count[group[t]]++;
                    }
                    continue;
                }
                for (int part = 0; part < 4; part++) {
                    long wanted = subBlock(mine, block, part);
                    int inSub = 0;
                    for (int t = 0; t < members; t++) {
                        if (subBlock(seedOf(pool.get(group[t]), s), block, part) == wanted) {
                            sub[inSub++] = group[t];
                        }
                    }
                    for (int t = Math.max(0, inSub - window); t < inSub; t++) {
                        count[sub[t]]++;
                    }
                }
            }
        }
        int shared = Math.max(1, Math.min(minShared, BLOCKS * width));
        // most shared first, then the nearer (later) one: count in the high half, position in the low half
        long[] ranked = new long[last];
        int kept = 0;
        for (int row = 0; row < last; row++) {
            if (count[row] >= shared) {
                ranked[kept++] = (long) count[row] << 32 | row;
            }
        }
        Arrays.sort(ranked, 0, kept);
        int take = Math.min(maxCandidates, kept);
        int[] out = new int[take];
        for (int r = 0; r < take; r++) {
            out[r] = (int) ranked[kept - 1 - r];
        }
        Arrays.sort(out);
        return sameExact < 0 ? out : withPosition(out, sameExact);
    }

    /** Seed {@code s} of a document, 0 for a seed it lacks (Python's zero-padded matrix). */
    private static long seedOf(Fingerprinted doc, int s) {
        return s < doc.seeds() ? doc.fingerprint(s) : 0L;
    }

    /** The 12-bit sub-block {@code part} of the 48 bits outside {@code block} (as {@link #tablePairs} splits). */
    private static long subBlock(long value, int block, int part) {
        int shift = 16 * (3 - block);
        long low = value & ((1L << shift) - 1);
        long rest = block == 0 ? low : ((value >>> (shift + 16)) << shift) | low;
        return (rest >>> (12 * (3 - part))) & 0xFFFL;
    }

    private static int[] okPositions(List<Fingerprinted> pool) {
        int[] out = new int[pool.size()];
        int count = 0;
        for (int row = 0; row < pool.size(); row++) {
            Fingerprinted doc = pool.get(row);
            if (doc.isOk()) {
                if (doc.allSeeds() == false) {
                    throw new IllegalArgumentException("document " + row + " of the pool has seed 0 only (read from doc"
                        + " values); the candidate rule needs every seed's blocks");
                }
                out[count++] = row;
            }
        }
        return Arrays.copyOf(out, count);
    }

    /** The candidate pairs by shared blocks ({@code candidate_pairs}), grouped by the later document. */
    private void blockCandidates(List<Fingerprinted> pool, int[] valid, int[][] out) {
        int n = pool.size();
        int width = 0;
        for (int row : valid) {
            width = Math.max(width, pool.get(row).seeds());
        }
        // fingerprints by position, seeds a document lacks read as 0 (Python's zero-padded matrix)
        long[][] fps = new long[width][n];
        for (int row : valid) {
            Fingerprinted doc = pool.get(row);
            for (int s = 0; s < doc.seeds(); s++) {
                fps[s][row] = doc.fingerprint(s);
            }
        }
        LongList found = new LongList();
        for (int s = 0; s < width; s++) {
            for (int block = 0; block < BLOCKS; block++) {
                tablePairs(fps[s], valid, block, n, found);
            }
        }
        long[] packed = found.sorted();
        int shared = Math.max(1, Math.min(minShared, BLOCKS * width));
        // (i, j, count) of the pairs found at least `shared` times, grouped by j
        int[] perLater = new int[n];
        LongList kept = new LongList();
        for (int at = 0; at < packed.length;) {
            int end = at;
            while (end < packed.length && packed[end] == packed[at]) {
                end++;
            }
            int count = end - at;
            if (count >= shared) {
                kept.add(packed[at]);
                kept.add(count);
                perLater[(int) (packed[at] % n)]++;
            }
            at = end;
        }
        int[] start = new int[n + 1];
        for (int j = 0; j < n; j++) {
            start[j + 1] = start[j] + perLater[j];
        }
        // per later document: count in the high half, earlier position in the low half, so a descending read is
        // "most shared first, then the nearer one" (Python's lexsort of (-i, -shared, j))
        long[] ranked = new long[start[n]];
        int[] filled = Arrays.copyOf(start, n);
        for (int k = 0; k < kept.size(); k += 2) {
            long pair = kept.get(k);
            int i = (int) (pair / n);
            int j = (int) (pair % n);
            ranked[filled[j]++] = kept.get(k + 1) << 32 | i;
        }
        for (int j = 0; j < n; j++) {
            int from = start[j];
            int to = start[j + 1];
            if (from == to) {
                continue;
            }
            Arrays.sort(ranked, from, to);
            int take = Math.min(maxCandidates, to - from);
            int[] earlier = new int[take];
            for (int r = 0; r < take; r++) {
                earlier[r] = (int) ranked[to - 1 - r];
            }
            Arrays.sort(earlier);
            out[j] = earlier;
        }
    }

    /**
     * The pairs of one (seed, block) table ({@code _bucket_pairs}), each as {@code i * n + j} with i before j. Members
     * sort by block value, then position (numpy's stable argsort of the values over ascending members).
     */
    private void tablePairs(long[] column, int[] valid, int block, int n, LongList out) {
        int shift = 16 * (3 - block);
        long[] sorted = new long[valid.length];
        for (int t = 0; t < valid.length; t++) {
            sorted[t] = ((column[valid[t]] >>> shift) & 0xFFFFL) << 32 | valid[t];
        }
        Arrays.sort(sorted);
        LongList big = new LongList();
        for (int at = 0; at < sorted.length;) {
            int end = runEnd(sorted, at);
            if (end - at > maxBucket) {
                for (int t = at; t < end; t++) {
                    big.add(sorted[t] & 0xFFFFFFFFL);
                }
            } else {
                runPairs(sorted, at, end, n, out);
            }
            at = end;
        }
        if (big.size() == 0) {
            return;
        }
        long lowMask = (1L << shift) - 1;
        for (int sub = 0; sub < 4; sub++) {
            long[] split = new long[big.size()];
            for (int t = 0; t < split.length; t++) {
                int position = (int) big.get(t);
                long value = column[position];
                long key = (value >>> shift) & 0xFFFFL;
                long low = value & lowMask;
                long rest = block == 0 ? low : ((value >>> (shift + 16)) << shift) | low;
                long subBlock = (rest >>> (12 * (3 - sub))) & 0xFFFL;
                split[t] = (key << 12 | subBlock) << 32 | position;
            }
            Arrays.sort(split);
            for (int at = 0; at < split.length;) {
                int end = runEnd(split, at);
                runPairs(split, at, end, n, out);
                at = end;
            }
        }
    }

    /** The end of the run of equal keys (high 32 bits) starting at {@code at}. */
    private static int runEnd(long[] sorted, int at) {
        long key = sorted[at] >>> 32;
        int end = at + 1;
        while (end < sorted.length && sorted[end] >>> 32 == key) {
            end++;
        }
        return end;
    }

    /** Each member of a run with the {@code window} members before it ({@code _pairs_in_runs}). */
    private void runPairs(long[] sorted, int at, int end, int n, LongList out) {
        for (int t = at + 1; t < end; t++) {
            long later = sorted[t] & 0xFFFFFFFFL;
            for (int u = Math.max(at, t - window); u < t; u++) {
                out.add((sorted[u] & 0xFFFFFFFFL) * n + later);
            }
        }
    }

    /** A growable list of longs: pair counts reach millions in a large pool, too many to box. */
    private static final class LongList {
        private long[] values = new long[64];
        private int size;

        void add(long value) {
            if (size == values.length) {
                values = Arrays.copyOf(values, size * 2);
            }
            values[size++] = value;
        }

        long get(int index) {
            return values[index];
        }

        int size() {
            return size;
        }

        long[] sorted() {
            long[] out = Arrays.copyOf(values, size);
            Arrays.sort(out);
            return out;
        }
    }
}
