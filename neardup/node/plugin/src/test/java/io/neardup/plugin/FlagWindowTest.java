package io.neardup.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.neardup.flag.Fingerprinted;

/** The node's window: what a document sees, when entries leave, the bound, and the assignment futures. */
final class FlagWindowTest {
    private static final long SECOND = 1_000_000_000L;
    private final AtomicLong now = new AtomicLong(1_000 * SECOND);
    private final AtomicLong time = new AtomicLong();

    private static Fingerprinted doc() {
        return new Fingerprinted(new long[] { 1L }, new long[0], "e", Fingerprinted.OK, null, true);
    }

    private FlagWindow.Registration register(FlagWindow window, String index, String id) {
        return window.register(index, id, "v1", doc(), () -> IndexedAt.format(time.incrementAndGet()), 5 * SECOND);
    }

    private static List<String> ids(FlagWindow.Snapshot snapshot) {
        List<String> out = new ArrayList<>();
        for (int k = 0; k < snapshot.size(); k++) {
            out.add(snapshot.get(k).id);
        }
        return out;
    }

    @Test
    void aDocumentSeesTheEarlierDocumentsOfItsIndexInOrder() {
        FlagWindow window = new FlagWindow(100, now::get);
        register(window, "news", "a");
        register(window, "other", "x");
        register(window, "news", "b");
        FlagWindow.Registration c = register(window, "news", "c");
        assertEquals(List.of("a", "b"), ids(c.earlier()));
        assertEquals("1970-01-01T00:00:00.000000004Z", c.entry().indexedAt); // taken at registration, in order
        register(window, "news", "d"); // a later document does not change what c saw
        assertEquals(List.of("a", "b"), ids(c.earlier()));
    }

    @Test
    void anEntryLeavesTheWindowSecondsAfterItsAssignmentNotBefore() {
        FlagWindow window = new FlagWindow(100, now::get);
        FlagWindow.Entry a = register(window, "news", "a").entry();
        FlagWindow.Entry b = register(window, "news", "b").entry();
        window.assigned(a, "a");
        now.addAndGet(5 * SECOND);
        assertEquals(List.of("a", "b"), ids(register(window, "news", "c").earlier())); // exactly 5 s: still there
        now.addAndGet(1);
        assertEquals(List.of("b", "c"), ids(register(window, "news", "d").earlier())); // b is in flight: stays
        now.addAndGet(60 * SECOND);
        assertEquals(List.of("b", "c", "d"), ids(register(window, "news", "e").earlier()));
        window.assigned(b, "a");
        now.addAndGet(6 * SECOND);
        // b left; c and d were never assigned, so they stay however old
        assertEquals(List.of("c", "d", "e"), ids(register(window, "news", "f").earlier()));
    }

    @Test
    void whenFullTheOldestAssignedGoFirstAndInFlightOnesStay() {
        FlagWindow window = new FlagWindow(10, now::get);
        List<FlagWindow.Entry> entries = new ArrayList<>();
        for (int k = 0; k < 10; k++) {
            entries.add(register(window, k % 2 == 0 ? "news" : "other", "d" + k).entry());
        }
        for (int k = 2; k < 10; k++) { // d0 and d1 still in flight
            window.assigned(entries.get(k), "d" + k);
        }
        assertEquals(10, window.size());
        FlagWindow.Registration next = register(window, "news", "d10");
        assertEquals(10, window.size()); // one was due: down to 90% of the bound, then d10
        assertEquals(List.of("d0", "d4", "d6", "d8"), ids(next.earlier())); // d2 (the oldest assigned) left, d0 stayed
        assertEquals(Set.of("d1", "d3"), window.latest("other", List.of("d1", "d3"), Long.MAX_VALUE).keySet()); // d2 alone left
    }

    @Test
    void whenEverythingIsInFlightTheOldestGo() {
        FlagWindow window = new FlagWindow(3, now::get);
        for (int k = 0; k < 3; k++) {
            register(window, "news", "d" + k);
        }
        assertEquals(List.of("d1", "d2"), ids(register(window, "news", "d3").earlier()));
    }

    @Test
    void theAssignmentIsAFutureCompletedOnce() {
        FlagWindow window = new FlagWindow(10, now::get);
        FlagWindow.Entry a = register(window, "news", "a").entry();
        FlagWindow.Entry b = register(window, "news", "b").entry();
        assertFalse(a.cluster().isDone());
        assertFalse(a.isAssigned());
        window.assigned(a, "x");
        window.failed(a); // too late: the first outcome stands
        assertEquals("x", a.cluster().join());
        window.failed(b);
        assertTrue(b.cluster().isDone());
        assertNull(b.cluster().join()); // followers drop a failed document
    }

    @Test
    void latestGivesTheNewestCopyRegisteredBefore() {
        FlagWindow window = new FlagWindow(10, now::get);
        FlagWindow.Entry first = register(window, "news", "a").entry();
        FlagWindow.Entry later = register(window, "news", "b").entry();
        FlagWindow.Entry again = register(window, "news", "a").entry();
        assertEquals(again, window.latest("news", List.of("a"), Long.MAX_VALUE).get("a"));
        assertEquals(again, window.latest("news", List.of("a"), again.seq + 1).get("a"));
        assertTrue(window.latest("news", List.of("a"), later.seq).isEmpty()); // the newest copy is later: none before
        assertTrue(window.latest("news", List.of("a", "b"), first.seq).isEmpty());
        assertTrue(window.latest("missing", List.of("a"), Long.MAX_VALUE).isEmpty());
    }

    @Test
    void sharedBlocksCountsEqual16BitBlocksPerSeed() {
        java.util.Random random = new java.util.Random(7);
        for (int trial = 0; trial < 2_000; trial++) {
            long[] a = new long[16];
            long[] b = new long[16];
            int naive = 0;
            for (int s = 0; s < 16; s++) {
                a[s] = random.nextLong();
                b[s] = a[s];
                for (int block = 0; block < 4; block++) {
                    int mode = random.nextInt(4);
                    long mask = 0xFFFFL << (16 * block);
                    if (mode == 1) {
                        b[s] ^= mask & random.nextLong();
                    } else if (mode == 2) {
                        b[s] ^= 0x8000L << (16 * block); // the top bit of a block only
                    } else if (mode == 3) {
                        b[s] ^= 1L << (16 * block); // the low bit only
                    }
                }
                for (int block = 0; block < 4; block++) {
                    if (((a[s] >>> (16 * block)) & 0xFFFF) == ((b[s] >>> (16 * block)) & 0xFFFF)) {
                        naive++;
                    }
                }
            }
            Fingerprinted x = new Fingerprinted(a, new long[0], "e", Fingerprinted.OK, null, true);
            Fingerprinted y = new Fingerprinted(b, new long[0], "e", Fingerprinted.OK, null, true);
            assertEquals(naive, Flagger.sharedBlocks(x, y));
        }
    }
}
