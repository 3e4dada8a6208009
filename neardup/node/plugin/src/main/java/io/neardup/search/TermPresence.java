package io.neardup.search;

import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.util.BytesRef;
import org.apache.lucene.util.StringHelper;

/**
 * Which terms a segment's field holds, answered from memory, so that a lookup does not seek the terms it lacks.
 *
 * <p>Why: a lookup seeks 64 block tokens in every segment, and in a segment of n documents a 16-bit block value is
 * present with probability about n / 65,536. In the small segments that every refresh of a growing index writes, almost
 * every seek is for an absent term, and each one still walks the terms index and loads and decompresses a block of the
 * terms dictionary to find that out; in a profile of the flagging pipeline those seeks were most of the search's CPU.
 * A Bloom filter of a field's terms answers "absent" for most of them without touching the dictionary, and never
 * answers "absent" for a term the segment holds, so a lookup finds the same documents.
 *
 * <p>A filter is built only where it pays: each segment's field first counts how many of the terms sought in it were
 * found; once {@code trialSeeks} have been sought, a field where fewer than {@code mostFound} of them were found gets a
 * filter (one pass over its terms, in the search thread that decides), and a field where most are present (a large
 * segment) is left to plain seeks. Filters live as long as their segment's core (a closed listener drops them) and
 * together stay within {@code budgetBytes}; a field whose filter would pass the budget, or with more than 2^26 terms, is
 * searched by seeks. The budget is this class's own: Elasticsearch's circuit breakers do not count it.
 */
public final class TermPresence {
    /** The node's filters: 16 to 32 bits per term, 4 probes in one word of each. */
    public static final TermPresence SHARED = new TermPresence(256, 0.5, Runtime.getRuntime().maxMemory() / 32);

    private static final int BITS_PER_TERM = 16;
    private static final int PROBES = 4;
    /** the most terms a field may have for a filter of {@code BITS_PER_TERM} bits a term within the 2^30-bit cap */
    private static final long MOST_TERMS = (1L << 30) / BITS_PER_TERM;

    private final int trialSeeks;
    private final double mostFound;
    private final long budgetBytes;
    private final AtomicLong usedBytes = new AtomicLong();
    private final Map<Object, Map<String, Field>> segments = new ConcurrentHashMap<>();

    /**
     * @param trialSeeks seeks counted in a segment's field before deciding whether it gets a filter; 0 builds every
     *     field's filter at its first lookup, whatever share of its terms is found
     * @param mostFound the share of sought terms found below which a field gets one (with {@code trialSeeks} above 0)
     * @param budgetBytes the most all filters together may take
     */
    public TermPresence(int trialSeeks, double mostFound, long budgetBytes) {
        if (trialSeeks < 0 || mostFound < 0 || mostFound > 1 || budgetBytes < 0) {
            throw new IllegalArgumentException("trialSeeks >= 0, 0 <= mostFound <= 1 and budgetBytes >= 0, not "
                + trialSeeks + ", " + mostFound + ", " + budgetBytes);
        }
        this.trialSeeks = trialSeeks;
        this.mostFound = mostFound;
        this.budgetBytes = budgetBytes;
    }

    /** The record of {@code field} in {@code reader}'s segment; null when the segment has no core to key it by. */
    Field field(LeafReader reader, String field) {
        IndexReader.CacheHelper core = reader.getCoreCacheHelper();
        if (core == null) {
            return null;
        }
        Map<String, Field> fields = segments.computeIfAbsent(core.getKey(), key -> {
            core.addClosedListener(this::forget);
            return new ConcurrentHashMap<>();
        });
        return fields.computeIfAbsent(field, name -> new Field());
    }

    /** Bytes the live filters take. */
    public long usedBytes() {
        return usedBytes.get();
    }

    /** Segments with a record (for tests: a closed segment has none). */
    int segments() {
        return segments.size();
    }

    private void forget(IndexReader.CacheKey key) {
        Map<String, Field> fields = segments.remove(key);
        if (fields != null) {
            for (Field f : fields.values()) {
                Filter filter = f.filter;
                if (filter != null) {
                    usedBytes.addAndGet(-filter.bytes());
                }
            }
        }
    }

    /** One field of one segment: its seek counts until decided, then its filter or none. */
    final class Field {
        private static final int UNDECIDED = 0, DECIDING = 1, DECIDED = 2;
        private final AtomicLong sought = new AtomicLong();
        private final AtomicLong found = new AtomicLong();
        private final AtomicInteger state = new AtomicInteger(UNDECIDED);
        private volatile Filter filter;

        /** The field's filter, or null while there is none (undecided, or seeks serve it better). */
        Filter filter(Terms terms) throws IOException {
            if (trialSeeks == 0 && state.get() == UNDECIDED) {
                decide(terms);
            }
            return filter;
        }

        /** Counts one lookup's seeks in this field (those that ran, not those the filter spared); may decide. */
        void counted(int seeks, int hits, Terms terms) throws IOException {
            if (state.get() != UNDECIDED) {
                return;
            }
            long s = sought.addAndGet(seeks);
            long h = found.addAndGet(hits);
            if (s >= trialSeeks) {
                if (h < mostFound * s) {
                    decide(terms);
                } else {
                    state.compareAndSet(UNDECIDED, DECIDED);
                }
            }
        }

        private void decide(Terms terms) throws IOException {
            if (state.compareAndSet(UNDECIDED, DECIDING) == false) {
                return; // another search builds it, or it is decided
            }
            long count = terms.size();
            if (count < 0 || count > MOST_TERMS) {
                state.set(DECIDED); // a field that cannot say how many terms it has, or one too large to filter: seeks
                return;
            }
            long bytes = Filter.bytesFor(count);
            if (usedBytes.addAndGet(bytes) > budgetBytes) {
                usedBytes.addAndGet(-bytes);
                state.set(DECIDED); // over the budget: seeks
                return;
            }
            boolean built = false;
            try {
                filter = Filter.of(terms.iterator(), count);
                built = true;
            } finally {
                if (built) {
                    state.set(DECIDED);
                } else {
                    usedBytes.addAndGet(-bytes);
                    state.set(UNDECIDED); // a cancelled search: a later one builds it
                }
            }
        }
    }

    /**
     * What a filter is asked with: a term's two 32-bit murmur3 hashes, computed once for a term however many segments'
     * filters are asked about it.
     */
    static long key(BytesRef term) {
        int h1 = StringHelper.murmurhash3_x86_32(term, 0x9747b28c);
        int h2 = StringHelper.murmurhash3_x86_32(term, 0x5bd1e995);
        return ((long) h1 << 32) | (h2 & 0xFFFF_FFFFL);
    }

    /**
     * A blocked Bloom filter of a field's terms: the first hash picks one 64-bit word, the second sets {@code PROBES}
     * bits in it. A question reads one word (one cache miss, where a classic filter takes one per probe); the price is a
     * somewhat higher rate of false "present" answers (between 1 in 600 and 1 in 170 by how full the filter is).
     */
    static final class Filter {
        private final long[] words;
        private final int wordMask;

        private Filter(long[] words) {
            this.words = words;
            this.wordMask = words.length - 1;
        }

        static long bytesFor(long terms) {
            return (long) wordsFor(terms) * Long.BYTES;
        }

        private static int wordsFor(long terms) {
            long bits = Math.max(64, Long.highestOneBit(Math.max(1, terms * BITS_PER_TERM) - 1) << 1);
            return (int) (bits / 64); // a power of two, at most 2^24 words: a filter is built for at most MOST_TERMS terms
        }

        /** A filter holding every term {@code terms} enumerates ({@code count} of them). */
        static Filter of(TermsEnum terms, long count) throws IOException {
            Filter filter = new Filter(new long[wordsFor(count)]);
            for (BytesRef term = terms.next(); term != null; term = terms.next()) {
                long key = key(term);
                filter.words[filter.word(key)] |= bits(key);
            }
            return filter;
        }

        long bytes() {
            return (long) words.length * Long.BYTES;
        }

        private int word(long key) {
            return (int) (key >>> 32) & wordMask;
        }

        /** The {@code PROBES} bits of a key in its word, 6 bits of the second hash each. */
        private static long bits(long key) {
            long bits = 0;
            for (int i = 0; i < PROBES; i++) {
                bits |= 1L << (key >>> (6 * i));
            }
            return bits;
        }

        /** False only for a term the field does not hold; {@code key} is the term's {@link TermPresence#key}. */
        boolean mightContain(long key) {
            long bits = bits(key);
            return (words[word(key)] & bits) == bits;
        }
    }
}
