package io.neardup.plugin;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import io.neardup.flag.Fingerprinted;

/**
 * The documents this node fingerprinted moments ago, per index: candidates that a search cannot see yet.
 *
 * <p>Why: a document is searchable only after the next refresh, and the documents of one bulk request run through
 * the pipeline concurrently, so a search alone misses a reprint sent a moment after (or beside) its original. The
 * Python service keeps the same kind of window ({@code neardup/es/recent.py}) and treats the batch's own documents
 * as candidates; here every document is registered the moment it is fingerprinted, with a future of its
 * assignment, so a later document can wait (without blocking a thread) for the cluster of an earlier one that is
 * still searching.
 *
 * <p>Entries leave {@code windowNanos} after they were assigned (one still in flight stays); the node holds at most
 * {@code maxEntries}: when full, expired ones go first, then the oldest assigned ones, then (only if everything is
 * in flight) the oldest. An entry that leaves is no longer offered to later documents; whoever holds it already
 * keeps it, so no future is ever abandoned.
 *
 * <p>Registration is cheap and holds one lock; the per-document comparisons run outside it on a {@link Snapshot}:
 * an index's entries live in an array that is only appended to (a compaction makes a new array), so the entries
 * before a document's own position never change under a reader.
 */
final class FlagWindow {
    static final int DEFAULT_MAX_ENTRIES = 20_000;

    private final int maxEntries;
    private final LongSupplier nanoTime;
    private final Map<String, Segment> segments = new HashMap<>();
    private long sequence;
    private int total;

    FlagWindow(int maxEntries, LongSupplier nanoTime) {
        if (maxEntries < 1) {
            throw new IllegalArgumentException("maxEntries must be positive, not " + maxEntries);
        }
        this.maxEntries = maxEntries;
        this.nanoTime = nanoTime;
    }

    static FlagWindow system() {
        return new FlagWindow(DEFAULT_MAX_ENTRIES, System::nanoTime);
    }

    /** What a document knows of itself in the window; its assignment is a future the document completes once. */
    static final class Entry {
        final long seq;
        final String id;
        final String version;
        final String indexedAt;
        final Fingerprinted doc;
        private final long windowNanos;
        private final CompletableFuture<String> cluster = new CompletableFuture<>();
        private volatile long assignedAt;
        private volatile boolean assigned;

        Entry(long seq, String id, String version, String indexedAt, Fingerprinted doc, long windowNanos) {
            this.seq = seq;
            this.id = Objects.requireNonNull(id, "id");
            this.version = Objects.requireNonNull(version, "version");
            this.indexedAt = Objects.requireNonNull(indexedAt, "indexedAt");
            this.doc = Objects.requireNonNull(doc, "doc");
            this.windowNanos = windowNanos;
        }

        /** The cluster this document was assigned, or null when its ingest failed (it will not be written). */
        CompletableFuture<String> cluster() {
            return cluster;
        }

        boolean isAssigned() {
            return assigned;
        }

        private synchronized void complete(String value, long now) {
            if (cluster.isDone()) {
                return; // the first outcome stands
            }
            assignedAt = now;
            assigned = true;
            cluster.complete(value);
        }

        private boolean expired(long now) {
            return assigned && now - assignedAt > windowNanos;
        }
    }

    /** The entries of one index registered before a document, oldest first: {@code entries[from..to)}. */
    record Snapshot(Entry[] entries, int from, int to) {
        int size() {
            return to - from;
        }

        Entry get(int k) {
            return entries[from + k];
        }
    }

    /** A registered document and the window it sees. */
    record Registration(Entry entry, Snapshot earlier) {}

    /**
     * Registers a document of {@code index} and returns it with the entries registered before it. Its
     * {@code indexed_at} is taken inside the registration, so window order is time order for a node's own clock.
     */
    Registration register(String index, String id, String version, Fingerprinted doc, Supplier<String> indexedAt, long windowNanos) {
        synchronized (this) {
            long now = nanoTime.getAsLong();
            Segment existing = segments.get(index);
            if (existing != null) {
                total -= existing.expireHead(now);
            }
            if (total >= maxEntries) {
                evict(now); // may drop this index's segment when it empties: look it up again below
            }
            Segment segment = segments.computeIfAbsent(index, k -> new Segment());
            Entry entry = new Entry(sequence++, id, version, indexedAt.get(), doc, windowNanos);
            Snapshot earlier = segment.append(entry);
            total++;
            return new Registration(entry, earlier);
        }
    }

    /** Marks {@code entry} assigned to {@code cluster}; its window time starts now. */
    void assigned(Entry entry, String cluster) {
        entry.complete(Objects.requireNonNull(cluster, "cluster"), nanoTime.getAsLong());
    }

    /** Marks {@code entry} failed: followers drop it (it will not be written); it leaves like an assigned one. */
    void failed(Entry entry) {
        entry.complete(null, nanoTime.getAsLong());
    }

    /**
     * The newest entries of {@code index} with these ids registered before sequence number {@code before} (a search
     * hit with such an id is replaced by the window's newer copy; a canonical found here needs no fetch).
     */
    synchronized Map<String, Entry> latest(String index, java.util.Collection<String> ids, long before) {
        Segment segment = segments.get(index);
        Map<String, Entry> out = new HashMap<>();
        if (segment == null) {
            return out;
        }
        for (String id : ids) {
            Entry e = segment.byId.get(id);
            if (e != null && e.seq < before) {
                out.put(id, e);
            }
        }
        return out;
    }

    /** How many entries the node holds (expired ones included until the next registration clears them). */
    synchronized int size() {
        return total;
    }

    /** Drops expired entries everywhere, then the oldest assigned, then the oldest, down to 90% of the bound. */
    private void evict(long now) {
        List<Entry> all = new ArrayList<>(total);
        for (Segment s : segments.values()) {
            for (int k = s.head; k < s.size; k++) {
                all.add(s.entries[k]);
            }
        }
        int target = Math.max(0, maxEntries - Math.max(1, maxEntries / 10));
        int drop = all.size() - target;
        java.util.Set<Entry> gone = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        all.sort(Comparator.comparingLong(e -> e.seq));
        for (Entry e : all) {
            if (gone.size() >= drop) {
                break;
            }
            if (e.expired(now)) {
                gone.add(e);
            }
        }
        for (Entry e : all) {
            if (gone.size() >= drop) {
                break;
            }
            if (e.isAssigned()) {
                gone.add(e);
            }
        }
        for (Entry e : all) {
            if (gone.size() >= drop) {
                break;
            }
            gone.add(e);
        }
        segments.values().removeIf(s -> {
            s.keepOnly(gone);
            return s.size == s.head;
        });
        total = all.size() - gone.size();
    }

    /** One index's entries: appended at {@code size}, expired from {@code head}; a compaction copies. */
    private static final class Segment {
        private Entry[] entries = new Entry[16];
        private int head;
        private int size;
        private final Map<String, Entry> byId = new HashMap<>();

        Snapshot append(Entry entry) {
            if (size == entries.length) {
                int live = size - head;
                Entry[] grown = new Entry[Math.max(16, live * 2)];
                System.arraycopy(entries, head, grown, 0, live);
                entries = grown;
                head = 0;
                size = live;
            }
            Snapshot earlier = new Snapshot(entries, head, size);
            entries[size++] = entry;
            byId.put(entry.id, entry);
            return earlier;
        }

        /** Advances past expired entries at the head; how many left. */
        int expireHead(long now) {
            int before = head;
            while (head < size && entries[head].expired(now)) {
                byId.remove(entries[head].id, entries[head]);
                head++;
            }
            return head - before;
        }

        void keepOnly(java.util.Set<Entry> gone) {
            Entry[] kept = new Entry[Math.max(16, entries.length)];
            int n = 0;
            for (int k = head; k < size; k++) {
                if (gone.contains(entries[k]) == false) {
                    kept[n++] = entries[k];
                } else {
                    byId.remove(entries[k].id, entries[k]);
                }
            }
            entries = kept;
            head = 0;
            size = n;
            Arrays.fill(kept, n, kept.length, null);
        }
    }
}
