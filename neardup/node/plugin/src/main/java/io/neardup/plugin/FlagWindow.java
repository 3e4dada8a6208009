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
 * Python service keeps the same kind of window ({@code neardup/recent/writes.py}) and treats the batch's own documents
 * as candidates; here every document is registered the moment it is fingerprinted, with a future of its
 * assignment, so a later document can wait (without blocking a thread) for the cluster of an earlier one that is
 * still searching.
 *
 * <p>Entries leave {@code windowNanos} after they were assigned (one still in flight stays); the node holds at most
 * {@code maxEntries}: when full, expired ones go first, then the oldest assigned ones, then (only if everything is
 * in flight) the oldest. An entry that leaves is no longer offered to later documents; whoever holds it already
 * keeps it, so no future is ever abandoned.
 *
 * <p>A new document is offered only the earlier entries it can pair with ({@link #keys}: those sharing a 16-bit block
 * under the same seed, too-short ones the same exact hash), found through chains in a {@link KeyTable} (each entry
 * links, per key, to the previous entry with that key), so its cost is its own keys and the entries it shares them
 * with, not the window's size. Registration holds one lock for that walk and the linking.
 */
final class FlagWindow {
    static final int DEFAULT_MAX_ENTRIES = 20_000;
    /** (seed * 4 + block) must fit in 15 bits: see {@link #keys}. */
    static final int MAX_KEYED_SEEDS = 1 << 13;

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
        /** Its time: the registration's, or a stored copy's that it keeps ({@link #keepTime}) before it is assigned. */
        private volatile String indexedAt;
        final Fingerprinted doc;
        private final int[] keys;
        /** Per key position, the previous entry of the segment with the same key (the chain's next link). */
        private final Entry[] previous;
        /** The sequence number of the document whose walk last reached this entry (under the window's lock). */
        private long visitedBy = -1;
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
            this.keys = keys(doc);
            this.previous = new Entry[keys.length];
            this.windowNanos = windowNanos;
        }

        String indexedAt() {
            return indexedAt;
        }

        /**
         * Takes the time of a stored copy of the same document that it is still a near-duplicate of (sent again): read
         * by later documents once this one is assigned, so it must be set before.
         */
        void keepTime(String time) {
            this.indexedAt = Objects.requireNonNull(time, "time");
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

    /**
     * A registered document, the earlier entries of its index it shares a key with, oldest first, and its own newest
     * earlier entry (the same id registered before, in the window still), or null.
     */
    record Registration(Entry entry, List<Entry> earlier, Entry previous) {}

    /**
     * The keys under which a document can meet another: for an {@code ok} one, each (seed, block) 16-bit block as
     * {@code (seed * 4 + block) << 16 | value} (non-negative); for a too-short one, its exact hash's hash with the
     * sign bit set (a collision only offers a document the pairing check then refuses); none for the rest, which
     * pair with nothing. Two documents of the same version that {@link Flagger#sharedBlocks} or the exact hash pairs
     * always share a key. A key's position is part of it, so that a chain is one position's: hence at most
     * {@link #MAX_KEYED_SEEDS} seeds.
     */
    static int[] keys(Fingerprinted doc) {
        if (doc.isOk()) {
            if (doc.seeds() > MAX_KEYED_SEEDS) {
                throw new IllegalArgumentException("neardup flagging keys at most " + MAX_KEYED_SEEDS + " seeds, not " + doc.seeds());
            }
            int[] out = new int[doc.seeds() * 4];
            for (int s = 0; s < doc.seeds(); s++) {
                long fingerprint = doc.fingerprint(s);
                for (int block = 0; block < 4; block++) {
                    out[s * 4 + block] = ((s * 4 + block) << 16) | (int) ((fingerprint >>> (16 * block)) & 0xFFFF);
                }
            }
            return out;
        }
        if (Fingerprinted.TOO_SHORT.equals(doc.status())) {
            return new int[] { Integer.MIN_VALUE | doc.exact().hashCode() };
        }
        return new int[0];
    }

    /**
     * Registers a document of {@code index} and returns it with the earlier entries it shares a key with. Its
     * {@code indexed_at} is taken inside the registration, so window order is time order for a node's own clock (but for
     * a document sent again, which may keep its stored copy's earlier time: {@link Entry#keepTime}).
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
            List<Entry> earlier = segment.sharing(entry);
            Entry previous = segment.byId.get(id);
            segment.append(entry);
            total++;
            return new Registration(entry, earlier, previous);
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

    /** The entries {@code index} holds, oldest first (what a document registered now would be compared with). */
    synchronized List<Entry> live(String index) {
        Segment segment = segments.get(index);
        return segment == null ? List.of() : List.of(Arrays.copyOfRange(segment.entries, segment.head, segment.size));
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

    /**
     * One index's entries: appended at {@code size}, expired from {@code head}; a compaction copies. Every live entry
     * is linked into its keys' chains; a chain runs newest to oldest and ends at the first entry before {@code head}.
     */
    private static final class Segment {
        private Entry[] entries = new Entry[16];
        private int head;
        private int size;
        private final Map<String, Entry> byId = new HashMap<>();
        private KeyTable<Entry> chains = new KeyTable<>(0);
        /** Appends since the table was last rebuilt: see {@link #append}. */
        private int linkedSinceRelink;

        /** The live entries sharing a key with {@code entry} (not yet appended), oldest first, each once. */
        List<Entry> sharing(Entry entry) {
            if (head == size || entry.keys.length == 0) {
                return List.of();
            }
            long oldest = entries[head].seq;
            List<Entry> out = new ArrayList<>();
            for (int p = 0; p < entry.keys.length; p++) {
                for (Entry e = chains.get(entry.keys[p]); e != null && e.seq >= oldest; e = e.previous[p]) {
                    if (e.visitedBy != entry.seq) {
                        e.visitedBy = entry.seq;
                        out.add(e);
                    }
                }
            }
            out.sort(Comparator.comparingLong(e -> e.seq));
            return out;
        }

        void append(Entry entry) {
            if (size == entries.length) {
                int live = size - head;
                Entry[] grown = new Entry[Math.max(16, live * 2)];
                System.arraycopy(entries, head, grown, 0, live);
                entries = grown;
                head = 0;
                size = live;
            }
            entries[size++] = entry;
            byId.put(entry.id, entry);
            link(entry);
            // Rebuilt when half full, and at least once per live count of appends: an entry that left stays reachable
            // through the links of later entries sharing its keys until then (a flood of one document would otherwise
            // keep every copy ever registered), so what is held stays within a small multiple of what is live.
            if (chains.full() || ++linkedSinceRelink > Math.max(KeyTable.MIN_CAPACITY, size - head)) {
                relink();
            }
        }

        private void link(Entry entry) {
            for (int p = 0; p < entry.keys.length; p++) {
                entry.previous[p] = chains.put(entry.keys[p], entry); // a key's position is part of the key
            }
        }

        /** A new table with the live entries' keys alone (those of entries that left stay in a table until then). */
        private void relink() {
            int keys = 0;
            for (int k = head; k < size; k++) {
                keys += entries[k].keys.length;
            }
            chains = new KeyTable<>(2 * keys);
            linkedSinceRelink = 0;
            for (int k = head; k < size; k++) {
                link(entries[k]);
            }
        }

        /**
         * Advances past expired entries at the head, letting go of them (the array is compacted only when it fills,
         * which a quiet index may not do for a long time); how many left.
         */
        int expireHead(long now) {
            int before = head;
            while (head < size && entries[head].expired(now)) {
                byId.remove(entries[head].id, entries[head]);
                entries[head++] = null;
            }
            if (head > before && head == size) {
                chains = new KeyTable<>(0); // nothing is live: no chain may keep the entries that left reachable
                linkedSinceRelink = 0;
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
            relink(); // chains may pass through the entries that left
        }
    }
}
