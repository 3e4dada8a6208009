package io.neardup.search;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchesUtils;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.QueryVisitor;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.ScorerSupplier;
import org.apache.lucene.search.Weight;
import org.apache.lucene.util.BytesRef;
import org.apache.lucene.util.BytesRefIterator;

/**
 * The block match of a near-duplicate lookup: the documents holding at least {@code minShared} of the given terms,
 * summed over several fields, each scoring the number of terms it holds (times the boost). It matches exactly what a
 * {@code BooleanQuery} of one constant-score {@code TermQuery} per term with {@code minimumNumberShouldMatch} does, and
 * scores the same, a term given twice included: it counts twice, as its two clauses would (see the constructor).
 *
 * <p>Highlighting: {@link Weight#matches} reports the terms of the query a matching document holds, field by field,
 * where the segment keeps positions (the highlighter's in-memory index of a document does; an index's keyword fields,
 * indexed with documents only, do not, and there it reports a match without terms, as a {@code TermQuery} does).
 *
 * <p>Why a query of its own: a lookup seeks its 64 block tokens in every segment's term dictionary and most of them
 * are absent (a 16-bit block value is present in a segment of n documents with probability about n / 65,536). Through
 * a {@code terms} query each field is a multi-term rewrite per segment (a filtered terms enum that positions on the
 * next existing term after every absent one, then a small boolean query of the terms found, with its own weights and
 * scorers), and through 64 {@code term} clauses each term's state is built over every segment and 64 scorers are
 * merged in a heap. Here each segment gets at most one {@code TermsEnum} per field, the sorted terms are sought with
 * {@code seekExact} (which stops at an absent term without moving on), their postings are gathered into one array and
 * counted: the same documents and scores, without a per-field rewrite, term states over every segment or a heap of
 * scorers.
 *
 * <p>Where most sought terms are absent (the small segments of a growing index), a {@link TermPresence} filter of the
 * segment's terms spares their seeks, and the {@code TermsEnum} of a field where it spares them all.
 *
 * <p>Given a {@link SketchCheck}, a match must also pass that second check, read from the segment's doc values as
 * the matches are found (in document order), so the rest of the query only sees verified documents.
 */
public final class BlockMatchQuery extends Query {
    /** the fields, distinct and in ascending order: the same query built from any order of them is equal */
    private final String[] fields;
    /** per field, its distinct terms in ascending order */
    private final BytesRef[][] terms;
    /** per field, how many times each of its terms was given; null where each was given once (a lookup's always) */
    private final int[][] repeats;
    private final int minShared;
    /** the second check a match must pass as well, or null */
    private final SketchCheck check;
    /** what spares the seeks of absent terms; it changes no result */
    private final TermPresence presence;
    /** per field, each term's {@link TermPresence#key}, hashed once for all segments */
    private final long[][] keys;

    /**
     * @param fields the fields, each with the terms of the same position in {@code termsPerField}
     * @param minShared how many of the terms a document must hold (at least 1)
     */
    public BlockMatchQuery(List<String> fields, List<List<BytesRef>> termsPerField, int minShared) {
        this(fields, termsPerField, minShared, null);
    }

    /**
     * @param check the second check each match must also pass (a lookup's {@code verify}), run on the matches of a
     *     segment as they are found, before any other clause sees them; null for none
     */
    public BlockMatchQuery(List<String> fields, List<List<BytesRef>> termsPerField, int minShared, SketchCheck check) {
        this(fields, termsPerField, minShared, check, TermPresence.SHARED);
    }

    /**
     * A term given more than once (in one field's list, or in two lists of the same field, as a field and its alias
     * resolve) counts once per time given, as each of its term clauses would in the boolean query this stands for:
     * {@code ["a", "a"]} with {@code minShared} 2 matches a document holding {@code a}, scoring 2. Chosen over
     * collapsing repeats (a {@code terms} query's set) because this query promises the boolean's matches and scores,
     * and {@code min_shared} counts the tokens given, so a user comparing the two finds them equal; and over refusing
     * repeats because the boolean takes them. A lookup's tokens carry their seed, so it never repeats one.
     *
     * @param presence the segments' term filters to consult ({@link TermPresence#SHARED} on a node), or null for none
     */
    public BlockMatchQuery(List<String> fields, List<List<BytesRef>> termsPerField, int minShared, SketchCheck check,
            TermPresence presence) {
        if (fields.size() != termsPerField.size()) {
            throw new IllegalArgumentException("one list of terms per field: " + fields.size() + " fields, " + termsPerField.size() + " lists");
        }
        if (minShared < 1) {
            throw new IllegalArgumentException("minShared must be at least 1, not " + minShared);
        }
        // fields in a canonical order, each once: a query read from the wire (whose map of fields may come in another
        // order) and the same query built locally are equal, and share a query-cache entry
        TreeMap<String, List<BytesRef>> byField = new TreeMap<>();
        for (int f = 0; f < fields.size(); f++) {
            byField.computeIfAbsent(fields.get(f), k -> new ArrayList<>()).addAll(termsPerField.get(f));
        }
        this.fields = byField.keySet().toArray(new String[0]);
        this.terms = new BytesRef[this.fields.length][];
        this.repeats = new int[this.fields.length][];
        for (int f = 0; f < this.fields.length; f++) {
            BytesRef[] sorted = byField.get(this.fields[f]).toArray(new BytesRef[0]);
            Arrays.sort(sorted);
            this.terms[f] = distinct(sorted);
            this.repeats[f] = this.terms[f].length == sorted.length ? null : repeats(sorted, this.terms[f].length);
        }
        this.keys = new long[this.fields.length][];
        for (int f = 0; presence != null && f < this.fields.length; f++) {
            this.keys[f] = Arrays.stream(this.terms[f]).mapToLong(TermPresence::key).toArray();
        }
        this.minShared = minShared;
        this.check = check;
        this.presence = presence;
    }

    /** The distinct terms of ascending {@code sorted}. */
    private static BytesRef[] distinct(BytesRef[] sorted) {
        BytesRef[] out = new BytesRef[sorted.length];
        int size = 0;
        for (BytesRef term : sorted) {
            if (size == 0 || out[size - 1].bytesEquals(term) == false) {
                out[size++] = term;
            }
        }
        return size == out.length ? out : Arrays.copyOf(out, size);
    }

    /** How many times each of the {@code distinct} terms of ascending {@code sorted} occurs in it. */
    private static int[] repeats(BytesRef[] sorted, int distinct) {
        int[] times = new int[distinct];
        int at = -1;
        for (int i = 0; i < sorted.length; i++) {
            if (i == 0 || sorted[i - 1].bytesEquals(sorted[i]) == false) {
                at++;
            }
            times[at]++;
        }
        return times;
    }

    @Override
    public Weight createWeight(IndexSearcher searcher, ScoreMode scoreMode, float boost) {
        return new Weight(this) {
            /** each segment's matches, found once however often a scorer is asked for (a search may ask twice) */
            private final Map<Object, Optional<Matches>> bySegment = new ConcurrentHashMap<>();

            private Matches found(LeafReaderContext context) throws IOException {
                Optional<Matches> known = bySegment.get(context.id());
                if (known == null) {
                    known = Optional.ofNullable(match(context.reader()));
                    bySegment.put(context.id(), known);
                }
                return known.orElse(null);
            }

            @Override
            public ScorerSupplier scorerSupplier(LeafReaderContext context) throws IOException {
                Matches matches = found(context);
                if (matches == null) {
                    return null; // nothing here: the segment is skipped
                }
                Weight weight = this;
                return new ScorerSupplier() {
                    @Override
                    public Scorer get(long leadCost) {
                        return new MatchScorer(weight, matches, boost);
                    }

                    @Override
                    public long cost() {
                        return matches.size;
                    }
                };
            }

            @Override
            public Scorer scorer(LeafReaderContext context) throws IOException {
                ScorerSupplier supplier = scorerSupplier(context);
                return supplier == null ? null : supplier.get(Long.MAX_VALUE);
            }

            @Override
            public Explanation explain(LeafReaderContext context, int doc) throws IOException {
                Matches matches = found(context);
                int at = matches == null ? -1 : Arrays.binarySearch(matches.docs, 0, matches.size, doc);
                if (at < 0) {
                    return Explanation.noMatch("holds fewer than " + minShared + " of the block terms" + (check == null ? "" : ", or fails the check"));
                }
                return Explanation.match(boost * matches.counts[at], "holds " + matches.counts[at] + " of the block terms");
            }

            /**
             * The terms of the query document {@code doc} holds, per field, for highlighting (what a disjunction of
             * term queries reports); a match without terms where the segment keeps no positions to report.
             */
            @Override
            public org.apache.lucene.search.Matches matches(LeafReaderContext context, int doc) throws IOException {
                Matches matches = found(context);
                if (matches == null || Arrays.binarySearch(matches.docs, 0, matches.size, doc) < 0) {
                    return null;
                }
                List<org.apache.lucene.search.Matches> perField = new ArrayList<>();
                for (int f = 0; f < fields.length; f++) {
                    Terms indexed = context.reader().terms(fields[f]);
                    if (indexed == null || indexed.hasPositions() == false) {
                        continue;
                    }
                    String field = fields[f];
                    BytesRef[] sought = terms[f];
                    org.apache.lucene.search.Matches held = MatchesUtils.forField(field,
                        () -> MatchesUtils.disjunction(context, doc, BlockMatchQuery.this, field, iterator(sought)));
                    if (held != null) { // null: the document holds none of this field's terms
                        perField.add(held);
                    }
                }
                return perField.isEmpty() ? MatchesUtils.MATCH_WITH_NO_TERMS : MatchesUtils.fromSubMatches(perField);
            }

            @Override
            public boolean isCacheable(LeafReaderContext ctx) {
                return true; // depends on the segment alone (its postings, and its doc values for the check)
            }
        };
    }

    private static BytesRefIterator iterator(BytesRef[] terms) {
        return new BytesRefIterator() {
            private int at;

            @Override
            public BytesRef next() {
                return at < terms.length ? terms[at++] : null;
            }
        };
    }

    /** The matching documents of one segment, ascending, with the number of terms each holds; null when none. */
    Matches match(LeafReader reader) throws IOException {
        Gathered gathered = new Gathered(reader.maxDoc());
        PostingsEnum postings = null;
        for (int f = 0; f < fields.length; f++) {
            Terms indexed = reader.terms(fields[f]);
            if (indexed == null) {
                continue;
            }
            TermPresence.Field known = presence == null ? null : presence.field(reader, fields[f]);
            TermPresence.Filter filter = known == null ? null : known.filter(indexed);
            // made at the first term the filter lets through: a segment's terms enum is costly to set up, and in the
            // small segments the filter serves it is often not needed at all
            TermsEnum termsEnum = null;
            int seeks = 0;
            int hits = 0;
            for (int t = 0; t < terms[f].length; t++) {
                BytesRef term = terms[f][t];
                if (filter != null && filter.mightContain(keys[f][t]) == false) {
                    continue;
                }
                seeks++;
                if (termsEnum == null) {
                    termsEnum = indexed.iterator();
                }
                if (termsEnum.seekExact(term) == false) {
                    continue;
                }
                hits++;
                int times = repeats[f] == null ? 1 : repeats[f][t];
                postings = termsEnum.postings(postings, PostingsEnum.NONE);
                for (int doc = postings.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = postings.nextDoc()) {
                    gathered.add(doc, times);
                }
            }
            if (known != null && filter == null) {
                known.counted(seeks, hits, indexed);
            }
        }
        Matches matches = gathered.count(minShared);
        return matches == null || check == null ? matches : checked(matches, check.open(reader));
    }

    /**
     * The postings of a segment's sought terms: their documents while there are fewer than the segment has documents,
     * then a count per document. Memory: this, {@link #count} and its {@link Matches} take at most about four ints
     * per document of the segment (16 bytes: 16 MB for a segment of a million), however many terms are sought or
     * postings found. It is not counted by Elasticsearch's circuit breakers, like the other per-segment arrays of a
     * query's execution; the number of terms, which is the work of the seeks, is bounded by
     * {@code index.max_terms_count} (the query builder refuses more), and a lookup seeks 64.
     */
    static final class Gathered {
        private final int maxDoc;
        private int[] docs = new int[64];
        private int n;
        /** per document, the terms it holds; made once the documents would outnumber the segment's */
        private int[] held;

        Gathered(int maxDoc) {
            this.maxDoc = maxDoc;
        }

        void add(int doc, int times) {
            if (held != null) {
                held[doc] += times;
                return;
            }
            if (n + times > docs.length) {
                if (n + times > maxDoc) {
                    // as many postings as documents: one count per document is no larger than the list, and stays so
                    held = new int[maxDoc];
                    for (int i = 0; i < n; i++) {
                        held[docs[i]]++;
                    }
                    docs = null;
                    held[doc] += times;
                    return;
                }
                docs = Arrays.copyOf(docs, Math.min(maxDoc, Math.max(n + times, 2 * docs.length)));
            }
            for (int r = 0; r < times; r++) {
                docs[n++] = doc;
            }
        }

        Matches count(int minShared) {
            if (held != null) {
                return countHeld(held, maxDoc, minShared);
            }
            return n == 0 ? null : BlockMatchQuery.count(docs, n, maxDoc, minShared);
        }
    }

    /** The matches that pass {@code check}, in the same order; null when none does. */
    static Matches checked(Matches matches, SketchCheck.Leaf check) throws IOException {
        int size = 0;
        int most = 0;
        for (int i = 0; i < matches.size; i++) {
            if (check.accepts(matches.docs[i])) {
                matches.docs[size] = matches.docs[i];
                matches.counts[size] = matches.counts[i];
                most = Math.max(most, matches.counts[i]);
                size++;
            }
        }
        return size == 0 ? null : new Matches(matches.docs, matches.counts, size, most);
    }

    /** Distinct documents of {@code docs[0..n)} held at least {@code minShared} times, ascending, with their counts. */
    static Matches count(int[] docs, int n, int maxDoc, int minShared) {
        if (n > maxDoc >>> 3) {
            // many postings for the segment's size (a crowded block value): count by document instead of sorting
            int[] held = new int[maxDoc];
            for (int i = 0; i < n; i++) {
                held[docs[i]]++;
            }
            return countHeld(held, maxDoc, minShared);
        }
        int[] out = new int[Math.min(n, maxDoc)];
        int[] counts = new int[out.length];
        int size = 0;
        int most = 0;
        Arrays.sort(docs, 0, n);
        for (int i = 0; i < n;) {
            int j = i + 1;
            while (j < n && docs[j] == docs[i]) {
                j++;
            }
            if (j - i >= minShared) {
                out[size] = docs[i];
                counts[size++] = j - i;
                most = Math.max(most, j - i);
            }
            i = j;
        }
        return size == 0 ? null : new Matches(out, counts, size, most);
    }

    /** The documents {@code held} at least {@code minShared} times (its entries: each document's count), ascending. */
    static Matches countHeld(int[] held, int maxDoc, int minShared) {
        int size = 0;
        for (int doc = 0; doc < maxDoc; doc++) {
            if (held[doc] >= minShared) {
                size++;
            }
        }
        if (size == 0) {
            return null;
        }
        int[] out = new int[size];
        int[] counts = new int[size];
        int most = 0;
        size = 0;
        for (int doc = 0; doc < maxDoc; doc++) {
            if (held[doc] >= minShared) {
                out[size] = doc;
                counts[size++] = held[doc];
                most = Math.max(most, held[doc]);
            }
        }
        return new Matches(out, counts, size, most);
    }

    /** Documents ascending and the number of terms each holds; the first {@code size} entries are used. */
    record Matches(int[] docs, int[] counts, int size, int most) {}

    private static final class MatchScorer extends Scorer {
        private final Matches matches;
        private final float boost;
        private int at = -1;
        private final DocIdSetIterator iterator = new DocIdSetIterator() {
            @Override
            public int docID() {
                return at < 0 ? -1 : at >= matches.size ? NO_MORE_DOCS : matches.docs[at];
            }

            @Override
            public int nextDoc() {
                at++;
                return docID();
            }

            @Override
            public int advance(int target) {
                int from = Math.max(at + 1, 0);
                if (from >= matches.size) {
                    at = matches.size;
                    return NO_MORE_DOCS;
                }
                int found = Arrays.binarySearch(matches.docs, from, matches.size, target);
                at = found >= 0 ? found : -found - 1;
                return docID();
            }

            @Override
            public long cost() {
                return matches.size;
            }
        };

        MatchScorer(Weight weight, Matches matches, float boost) {
            super(weight);
            this.matches = matches;
            this.boost = boost;
        }

        @Override
        public int docID() {
            return iterator.docID();
        }

        @Override
        public DocIdSetIterator iterator() {
            return iterator;
        }

        @Override
        public float getMaxScore(int upTo) {
            return boost * matches.most;
        }

        @Override
        public float score() {
            return boost * matches.counts[at];
        }
    }

    @Override
    public void visit(QueryVisitor visitor) {
        for (int f = 0; f < fields.length; f++) {
            if (visitor.acceptField(fields[f])) {
                List<Term> held = new ArrayList<>(terms[f].length);
                for (BytesRef term : terms[f]) {
                    held.add(new Term(fields[f], term));
                }
                visitor.consumeTerms(this, held.toArray(new Term[0]));
            }
        }
    }

    @Override
    public String toString(String field) {
        StringBuilder out = new StringBuilder("BlockMatch(min_shared=").append(minShared);
        for (int f = 0; f < fields.length; f++) {
            out.append(' ').append(fields[f]).append(":(");
            String separator = "";
            for (int t = 0; t < terms[f].length; t++) {
                for (int r = repeats[f] == null ? 1 : repeats[f][t]; r > 0; r--) {
                    out.append(separator).append(terms[f][t].utf8ToString());
                    separator = " ";
                }
            }
            out.append(')');
        }
        if (check != null) {
            out.append(" verify(").append(check.sketchField()).append(", ").append(check.hexField()).append(", fingerprint ")
                .append(Long.toHexString(check.fingerprint())).append(", ").append(check.sketch().length).append(" sketch values)");
        }
        return out.append(')').toString();
    }

    @Override
    public boolean equals(Object other) {
        if (sameClassAs(other) == false) {
            return false;
        }
        BlockMatchQuery that = (BlockMatchQuery) other;
        return minShared == that.minShared
            && Arrays.equals(fields, that.fields)
            && Arrays.deepEquals(terms, that.terms)
            && Arrays.deepEquals(repeats, that.repeats)
            && Objects.equals(check, that.check);
    }

    @Override
    public int hashCode() {
        return Objects.hash(classHash(), minShared, Arrays.hashCode(fields), Arrays.deepHashCode(terms), Arrays.deepHashCode(repeats), check);
    }
}
