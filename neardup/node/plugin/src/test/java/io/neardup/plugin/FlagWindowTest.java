package io.neardup.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.ref.WeakReference;
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

    private static List<String> ids(List<FlagWindow.Entry> entries) {
        List<String> out = new ArrayList<>();
        for (FlagWindow.Entry e : entries) {
            out.add(e.id);
        }
        return out;
    }

    private static Fingerprinted ok(long... fingerprints) {
        return new Fingerprinted(fingerprints, new long[0], "e", Fingerprinted.OK, null, true);
    }

    private static Fingerprinted tooShort(String exact) {
        return new Fingerprinted(new long[] { 0L }, new long[0], exact, Fingerprinted.TOO_SHORT, null, true);
    }

    private FlagWindow.Registration register(FlagWindow window, String id, Fingerprinted doc) {
        return window.register("news", id, "v1", doc, () -> IndexedAt.format(time.incrementAndGet()), 5 * SECOND);
    }

    @Test
    void aDocumentIsOfferedOnlyTheEarlierOnesSharingABlockOfTheSameSeedOrItsExactHash() {
        FlagWindow window = new FlagWindow(100, now::get);
        register(window, "a", ok(0x1111_2222_3333_4444L, 0x5555_6666_7777_8888L));
        register(window, "b", ok(0x9999_AAAA_BBBB_CCCCL, 0xDDDD_EEEE_FFFF_0000L));
        register(window, "c", ok(0x5555_6666_7777_8888L, 0x1111_2222_3333_4444L)); // a's blocks, under the other seeds
        register(window, "s", tooShort("x"));
        register(window, "t", tooShort("y"));
        assertEquals(List.of("a"), ids(register(window, "d", ok(0x0F0F_0F0F_0F0F_4444L, 0x0F0F_0F0F_0F0F_0F0FL)).earlier()));
        assertEquals(List.of("b", "c"), ids(register(window, "e", ok(0x0A0A_0A0A_0A0A_0A0AL, 0x0B0B_EEEE_0B0B_4444L)).earlier()));
        assertEquals(List.of("s"), ids(register(window, "u", tooShort("x")).earlier()));
        assertEquals(List.of(), ids(register(window, "v", ok(0x0123_4567_89AB_CDEFL, 0x0123_4567_89AB_CDEFL)).earlier()));
        Fingerprinted empty = new Fingerprinted(new long[0], new long[0], "", Fingerprinted.EMPTY, null, true);
        assertEquals(List.of(), ids(register(window, "w", empty).earlier()));
    }

    /**
     * What the window offers is what the pairing check finds in a pass over every entry the window held before the
     * document (the old scan), through expiries, evictions (a bound of 60), documents registered again and the
     * rebuilds of its key table; with blocks of a few values most pairs share one.
     */
    @Test
    void theOfferedEntriesAreThoseAScanOfTheWindowPairs() {
        java.util.Random random = new java.util.Random(11);
        FlagWindow window = new FlagWindow(60, now::get);
        int offeredTotal = 0;
        for (int k = 0; k < 3_000; k++) {
            Fingerprinted doc;
            int kind = random.nextInt(10);
            if (kind == 0) {
                doc = tooShort("x" + random.nextInt(3));
            } else {
                long[] fingerprints = new long[2 + random.nextInt(2)];
                for (int s = 0; s < fingerprints.length; s++) {
                    for (int block = 0; block < 4; block++) {
                        fingerprints[s] |= (long) random.nextInt(kind == 1 ? 2 : 40) << (16 * block);
                    }
                }
                doc = ok(fingerprints);
            }
            FlagWindow.Registration r = register(window, "d" + random.nextInt(500), doc);
            List<FlagWindow.Entry> held = window.live("news");
            assertEquals(r.entry(), held.get(held.size() - 1));
            List<FlagWindow.Entry> expected = new ArrayList<>();
            for (FlagWindow.Entry e : held.subList(0, held.size() - 1)) {
                boolean pairs = doc.isOk()
                    ? e.doc.isOk() && e.doc.seeds() == doc.seeds() && Flagger.sharedBlocks(doc, e.doc) > 0
                    : Fingerprinted.TOO_SHORT.equals(e.doc.status()) && e.doc.exact().equals(doc.exact());
                if (pairs) {
                    expected.add(e);
                }
            }
            List<FlagWindow.Entry> offered = new ArrayList<>();
            for (FlagWindow.Entry e : r.earlier()) { // of another seed count: another version, which the flagger drops
                if (e.doc.isOk() == false || e.doc.seeds() == doc.seeds()) {
                    offered.add(e);
                }
            }
            assertEquals(expected, offered, "document " + k);
            offeredTotal += offered.size();
            if (random.nextInt(3) > 0) {
                window.assigned(r.entry(), "c");
            }
            now.addAndGet(random.nextInt(200) * 1_000_000L);
        }
        assertTrue(offeredTotal > 10_000, "the property needs documents that pair: " + offeredTotal);
    }

    /** A flood of one document: the copies that left are not kept reachable through the chains of the later ones. */
    @Test
    void entriesThatLeftAreNotHeldThroughTheChains() throws InterruptedException {
        FlagWindow window = new FlagWindow(100_000, now::get);
        FlagWindow.Entry first = register(window, "a0", ok(0x1111_2222_3333_4444L)).entry();
        window.assigned(first, "c");
        WeakReference<FlagWindow.Entry> left = new WeakReference<>(first);
        first = null;
        for (int k = 1; k < 5_000; k++) {
            now.addAndGet(6 * SECOND);
            window.assigned(register(window, "a" + k, ok(0x1111_2222_3333_4444L)).entry(), "c");
        }
        assertEquals(1, window.live("news").size());
        for (int k = 0; k < 50 && left.get() != null; k++) {
            System.gc();
            Thread.sleep(20);
        }
        assertNull(left.get(), "the first copy left 5,000 copies ago");
    }

    /** A burst, then one document after it expired: the burst is let go at once, not when the array next fills. */
    @Test
    void aBurstThatExpiredIsNotHeldByTheSlotsBehindTheHead() throws InterruptedException {
        FlagWindow window = new FlagWindow(100_000, now::get);
        List<WeakReference<FlagWindow.Entry>> burst = new ArrayList<>();
        for (int k = 0; k < 1_000; k++) {
            FlagWindow.Entry entry = register(window, "b" + k, ok(0x1000_0000_0000_0000L + k * 0x0001_0001_0001_0001L)).entry();
            window.assigned(entry, "b" + k);
            burst.add(new WeakReference<>(entry));
        }
        now.addAndGet(6 * SECOND);
        register(window, "after", ok(0x0123_4567_89AB_CDEFL));
        assertEquals(1, window.live("news").size());
        for (int k = 0; k < 50 && burst.stream().anyMatch(r -> r.get() != null); k++) {
            System.gc();
            Thread.sleep(20);
        }
        assertEquals(0, burst.stream().filter(r -> r.get() != null).count(), "entries of the expired burst still held");
    }

    @Test
    void aDocumentSeesTheEarlierDocumentsOfItsIndexInOrder() {
        FlagWindow window = new FlagWindow(100, now::get);
        register(window, "news", "a");
        register(window, "other", "x");
        register(window, "news", "b");
        FlagWindow.Registration c = register(window, "news", "c");
        assertEquals(List.of("a", "b"), ids(c.earlier()));
        assertEquals("1970-01-01T00:00:00.000000004Z", c.entry().indexedAt()); // taken at registration, in order
        register(window, "news", "d"); // a later document does not change what c saw
        assertEquals(List.of("a", "b"), ids(c.earlier()));
    }

    @Test
    void aDocumentRegisteredAgainIsGivenItsNewestEarlierEntryOfItsIndex() {
        FlagWindow window = new FlagWindow(100, now::get);
        FlagWindow.Registration first = register(window, "news", "a");
        assertNull(first.previous());
        FlagWindow.Entry b = register(window, "news", "b").entry();
        register(window, "other", "a"); // another index's document of that id is another document
        FlagWindow.Registration again = register(window, "news", "a");
        assertSame(first.entry(), again.previous());
        for (FlagWindow.Entry e : List.of(first.entry(), b, again.entry())) {
            window.assigned(e, e.id);
        }
        now.addAndGet(6 * SECOND); // assigned more than the window's seconds ago: a search finds it now
        assertNull(register(window, "news", "a").previous());
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
