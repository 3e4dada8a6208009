package io.neardup.search;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.apache.lucene.analysis.core.KeywordAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.NoMergePolicy;
import org.apache.lucene.index.ReaderUtil;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.memory.MemoryIndex;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.ConstantScoreQuery;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchesIterator;
import org.apache.lucene.search.MatchesUtils;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.Weight;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.apache.lucene.util.BytesRef;
import org.junit.jupiter.api.Test;

/**
 * {@link BlockMatchQuery} against the query it stands for: a boolean of one constant-score term clause per token
 * with {@code minimumNumberShouldMatch}. Documents hold "seed:value" tokens drawn from a small value range, so that
 * many documents share one, two or more tokens with a query, over several segments (some with deletions).
 */
class BlockMatchQueryTest {
    private static final List<String> FIELDS = List.of("b0", "b1", "b2", "b3");
    private static final int SEEDS = 16;

    private static String token(int seed, int value) {
        return seed + ":" + Integer.toHexString(value);
    }

    private static List<List<String>> draw(Random random, int values) {
        List<List<String>> tokens = new ArrayList<>();
        for (int f = 0; f < FIELDS.size(); f++) {
            List<String> field = new ArrayList<>();
            for (int seed = 0; seed < SEEDS; seed++) {
                field.add(token(seed, random.nextInt(values)));
            }
            tokens.add(field);
        }
        return tokens;
    }

    private static Directory index(Random random, int docs, int values) throws IOException {
        Directory dir = new ByteBuffersDirectory();
        IndexWriterConfig config = new IndexWriterConfig().setMergePolicy(NoMergePolicy.INSTANCE);
        try (IndexWriter writer = new IndexWriter(dir, config)) {
            for (int d = 0; d < docs; d++) {
                Document doc = new Document();
                doc.add(new StringField("id", Integer.toString(d), Field.Store.NO));
                List<List<String>> tokens = draw(random, values);
                for (int f = 0; f < FIELDS.size(); f++) {
                    if (d % 17 == 3 && f == 2) {
                        continue; // some documents lack a field
                    }
                    for (String t : tokens.get(f)) {
                        doc.add(new StringField(FIELDS.get(f), t, Field.Store.NO));
                    }
                }
                writer.addDocument(doc);
                if (d % 97 == 96) {
                    writer.commit(); // a new segment
                }
                if (d % 11 == 5) {
                    writer.deleteDocuments(new Term("id", Integer.toString(d - 3)));
                }
            }
        }
        return dir;
    }

    private static Query reference(List<List<String>> tokens, int minShared) {
        BooleanQuery.Builder bool = new BooleanQuery.Builder();
        for (int f = 0; f < FIELDS.size(); f++) {
            for (String t : tokens.get(f)) {
                bool.add(new ConstantScoreQuery(new TermQuery(new Term(FIELDS.get(f), t))), BooleanClause.Occur.SHOULD);
            }
        }
        return bool.setMinimumNumberShouldMatch(minShared).build();
    }

    private static BlockMatchQuery blocks(List<List<String>> tokens, int minShared) {
        return new BlockMatchQuery(FIELDS, terms(tokens), minShared);
    }

    static List<List<BytesRef>> terms(List<List<String>> tokens) {
        List<List<BytesRef>> terms = new ArrayList<>();
        for (List<String> field : tokens) {
            terms.add(field.stream().map(BytesRef::new).toList());
        }
        return terms;
    }

    /** With no term filters, with a filter on every segment from the first query, and as the node decides. */
    private static final List<TermPresence> PRESENCES = List.of(
        new TermPresence(0, 1.0, Long.MAX_VALUE), new TermPresence(256, 0.5, Long.MAX_VALUE));

    @Test
    void findsAndScoresWhatTheBooleanOfTermClausesDoes() throws IOException {
        Random random = new Random(20261125);
        int compared = 0;
        int matched = 0;
        // few values: every query shares tokens with many documents; more values: a few, as in a large index
        for (int values : new int[] { 6, 40, 400 }) {
            try (Directory dir = index(random, 1_000, values); DirectoryReader reader = DirectoryReader.open(dir)) {
                assertTrue(reader.leaves().size() > 5);
                IndexSearcher searcher = new IndexSearcher(reader);
                for (int q = 0; q < 60; q++) {
                    List<List<String>> tokens = draw(random, values);
                    int minShared = 1 + q % 4;
                    TopDocs expected = searcher.search(reference(tokens, minShared), reader.maxDoc());
                    List<Query> ways = new ArrayList<>();
                    ways.add(new BlockMatchQuery(FIELDS, terms(tokens), minShared, null, null));
                    for (TermPresence presence : PRESENCES) {
                        ways.add(new BlockMatchQuery(FIELDS, terms(tokens), minShared, null, presence));
                    }
                    for (Query way : ways) {
                        TopDocs actual = searcher.search(way, reader.maxDoc());
                        assertEquals(expected.totalHits.value, actual.totalHits.value);
                        ScoreDoc[] want = expected.scoreDocs;
                        ScoreDoc[] got = actual.scoreDocs;
                        assertEquals(want.length, got.length);
                        for (int i = 0; i < want.length; i++) {
                            assertEquals(want[i].doc, got[i].doc);
                            assertEquals(want[i].score, got[i].score);
                        }
                        assertEquals(searcher.count(reference(tokens, minShared)), searcher.count(way));
                    }
                    compared++;
                    matched += expected.scoreDocs.length;
                }
            }
        }
        assertEquals(180, compared);
        assertTrue(matched > 1_000, "the queries matched " + matched + " documents in all");
        for (TermPresence presence : PRESENCES) {
            assertTrue(presence.usedBytes() == 0 && presence.segments() == 0, "closed segments keep no filters");
        }
    }

    @Test
    void explainsTheCountOfTermsADocumentHolds() throws IOException {
        try (Directory dir = index(new Random(3), 300, 8); DirectoryReader reader = DirectoryReader.open(dir)) {
            IndexSearcher searcher = new IndexSearcher(reader);
            List<List<String>> tokens = draw(new Random(4), 8);
            ScoreDoc top = searcher.search(blocks(tokens, 1), 1).scoreDocs[0];
            Explanation explained = searcher.explain(blocks(tokens, 1), top.doc);
            assertTrue(explained.isMatch());
            assertEquals(top.score, explained.getValue().floatValue());
            Explanation missed = searcher.explain(blocks(tokens, 64), top.doc);
            assertEquals(false, missed.isMatch());
        }
    }

    @Test
    void aScorerAskedForTwiceGivesTheSameMatchesAndNoneWhereNothingMatches() throws IOException {
        try (Directory dir = index(new Random(5), 500, 40); DirectoryReader reader = DirectoryReader.open(dir)) {
            IndexSearcher searcher = new IndexSearcher(reader);
            Weight weight = searcher.createWeight(searcher.rewrite(blocks(draw(new Random(6), 40), 1)), ScoreMode.COMPLETE, 1f);
            int segmentsWithout = 0;
            for (LeafReaderContext leaf : reader.leaves()) {
                Scorer first = weight.scorer(leaf);
                if (first == null) {
                    assertNull(weight.scorerSupplier(leaf));
                    segmentsWithout++;
                    continue;
                }
                Scorer second = weight.scorer(leaf);
                for (int doc = first.iterator().nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = first.iterator().nextDoc()) {
                    assertEquals(doc, second.iterator().nextDoc());
                    assertEquals(first.score(), second.score());
                }
                assertEquals(DocIdSetIterator.NO_MORE_DOCS, second.iterator().nextDoc());
            }
            assertTrue(segmentsWithout < reader.leaves().size());
        }
    }

    @Test
    void countsByDocumentAndBySortAlike() {
        int[] docs = { 5, 1, 5, 9, 1, 5, 0 };
        BlockMatchQuery.Matches sorted = BlockMatchQuery.count(docs.clone(), docs.length, 1_000, 2);
        BlockMatchQuery.Matches dense = BlockMatchQuery.count(docs.clone(), docs.length, 10, 2);
        for (BlockMatchQuery.Matches m : List.of(sorted, dense)) {
            assertEquals(2, m.size());
            assertEquals(List.of(1, 5), List.of(m.docs()[0], m.docs()[1]));
            assertEquals(List.of(2, 3), List.of(m.counts()[0], m.counts()[1]));
            assertEquals(3, m.most());
        }
        assertNull(BlockMatchQuery.count(new int[] { 1, 2 }, 2, 1_000, 2));
    }

    @Test
    void equalQueriesAreEqualAndBadArgumentsAreRefused() {
        List<List<String>> tokens = draw(new Random(1), 50);
        List<List<String>> shuffled = new ArrayList<>();
        for (List<String> field : tokens) {
            List<String> copy = new ArrayList<>(field);
            java.util.Collections.reverse(copy);
            shuffled.add(copy);
        }
        assertEquals(blocks(tokens, 1), blocks(shuffled, 1));
        assertEquals(blocks(tokens, 1).hashCode(), blocks(shuffled, 1).hashCode());
        assertNotEquals(blocks(tokens, 1), blocks(tokens, 2));
        assertThrows(IllegalArgumentException.class, () -> blocks(tokens, 0));
        assertThrows(IllegalArgumentException.class, () -> new BlockMatchQuery(FIELDS, List.of(), 1));
    }

    /**
     * The fields in another order (as a query read from the wire gives them, from a map of no set order) make the
     * same query, with the same hash: the query cache keys on them.
     */
    @Test
    void theOrderOfTheFieldsDoesNotMatter() {
        List<List<String>> tokens = draw(new Random(2), 50);
        List<String> fields = new ArrayList<>(FIELDS);
        List<List<String>> byField = new ArrayList<>(tokens);
        java.util.Collections.reverse(fields);
        java.util.Collections.reverse(byField);
        BlockMatchQuery reversed = new BlockMatchQuery(fields, terms(byField), 2);
        assertEquals(blocks(tokens, 2), reversed);
        assertEquals(blocks(tokens, 2).hashCode(), reversed.hashCode());
        assertEquals(blocks(tokens, 2).toString(), reversed.toString());
    }

    /**
     * A token given twice counts twice, as its two term clauses do in the boolean query: the same documents and
     * scores, whether repeated in one field's list or given in two lists of the same field (a field and its alias).
     */
    @Test
    void repeatedTokensCountAsTheirTermClausesDo() throws IOException {
        Random random = new Random(7);
        try (Directory dir = index(random, 600, 12); DirectoryReader reader = DirectoryReader.open(dir)) {
            IndexSearcher searcher = new IndexSearcher(reader);
            int matched = 0;
            for (int q = 0; q < 30; q++) {
                List<List<String>> tokens = draw(random, 12);
                List<List<String>> repeated = new ArrayList<>();
                for (List<String> field : tokens) {
                    List<String> more = new ArrayList<>(field);
                    more.addAll(field.subList(0, 1 + q % 5)); // some tokens twice
                    repeated.add(more);
                }
                int minShared = 2 + q % 3;
                TopDocs expected = searcher.search(reference(repeated, minShared), reader.maxDoc());
                TopDocs actual = searcher.search(blocks(repeated, minShared), reader.maxDoc());
                assertEquals(expected.scoreDocs.length, actual.scoreDocs.length);
                for (int i = 0; i < expected.scoreDocs.length; i++) {
                    assertEquals(expected.scoreDocs[i].doc, actual.scoreDocs[i].doc);
                    assertEquals(expected.scoreDocs[i].score, actual.scoreDocs[i].score);
                }
                matched += expected.scoreDocs.length;
                // the same tokens in two lists of one field
                List<String> fields = new ArrayList<>(FIELDS);
                List<List<String>> split = new ArrayList<>(tokens);
                for (int f = 0; f < FIELDS.size(); f++) {
                    fields.add(FIELDS.get(f));
                    split.add(repeated.get(f).subList(tokens.get(f).size(), repeated.get(f).size()));
                }
                assertEquals(blocks(repeated, minShared), new BlockMatchQuery(fields, terms(split), minShared));
            }
            assertTrue(matched > 100, "the queries matched " + matched + " documents in all");
        }
        List<List<String>> once = List.of(List.of("0:a"), List.of(), List.of(), List.of());
        List<List<String>> twice = List.of(List.of("0:a", "0:a"), List.of(), List.of(), List.of());
        assertNotEquals(blocks(once, 1), blocks(twice, 1));
    }

    /** Gathered as documents or as a count per document (past the segment's size), the matches are the same. */
    @Test
    void gatheringPastTheSegmentsSizeCountsTheSame() {
        Random random = new Random(9);
        for (int round = 0; round < 200; round++) {
            int maxDoc = 1 + random.nextInt(300);
            int postings = random.nextInt(3 * maxDoc);
            int[] docs = new int[postings];
            BlockMatchQuery.Gathered gathered = new BlockMatchQuery.Gathered(maxDoc);
            int n = 0;
            for (int i = 0; i < postings; i++) {
                int doc = random.nextInt(maxDoc);
                int times = random.nextInt(10) == 0 ? 2 : 1;
                gathered.add(doc, times);
                for (int r = 0; r < times; r++) {
                    if (n == docs.length) {
                        docs = java.util.Arrays.copyOf(docs, 2 * n + 1);
                    }
                    docs[n++] = doc;
                }
            }
            for (int minShared = 1; minShared <= 3; minShared++) {
                BlockMatchQuery.Matches want = n == 0 ? null : BlockMatchQuery.count(docs.clone(), n, maxDoc, minShared);
                BlockMatchQuery.Matches got = gathered.count(minShared);
                if (want == null) {
                    assertNull(got);
                    continue;
                }
                assertEquals(want.size(), got.size());
                assertEquals(want.most(), got.most());
                for (int i = 0; i < want.size(); i++) {
                    assertEquals(want.docs()[i], got.docs()[i]);
                    assertEquals(want.counts()[i], got.counts()[i]);
                }
            }
        }
    }

    /**
     * Highlighting asks the weight for a document's matches on an in-memory index of it, which keeps positions: the
     * terms of the query it holds are reported, field by field (none before, where {@code terms} gave them). Where
     * no positions are kept, a match without terms.
     */
    @Test
    void reportsTheTermsADocumentHoldsForHighlighting() throws IOException {
        MemoryIndex memory = new MemoryIndex();
        memory.addField("b0", "0:aa", new KeywordAnalyzer());
        memory.addField("b1", "1:bb", new KeywordAnalyzer());
        memory.addField("b3", "3:dd", new KeywordAnalyzer()); // a field holding none of the query's terms
        IndexSearcher searcher = memory.createSearcher();
        LeafReaderContext leaf = searcher.getIndexReader().leaves().get(0);
        BlockMatchQuery query = blocks(List.of(List.of("0:aa", "0:zz"), List.of("1:bb"), List.of("2:cc"), List.of("3:ee")), 2);
        Weight weight = searcher.createWeight(searcher.rewrite(query), ScoreMode.COMPLETE_NO_SCORES, 1f);
        org.apache.lucene.search.Matches matches = weight.matches(leaf, 0);
        assertTrue(matches != null);
        List<String> fields = new ArrayList<>();
        matches.forEach(fields::add);
        assertEquals(List.of("b0", "b1"), fields.stream().sorted().toList());
        for (String field : List.of("b0", "b1")) {
            MatchesIterator positions = matches.getMatches(field);
            assertTrue(positions.next());
            assertEquals(0, positions.startPosition());
            assertEquals(false, positions.next());
        }
        assertNull(matches.getMatches("b2"));
        assertNull(matches.getMatches("b3"));
        Weight stricter = searcher.createWeight(searcher.rewrite(blocks(List.of(List.of("0:aa"), List.of(), List.of(), List.of()), 2)),
            ScoreMode.COMPLETE_NO_SCORES, 1f);
        assertNull(stricter.matches(leaf, 0), "a document the query does not match has no matches");
        // in an index whose fields keep no positions (a keyword's), a match is reported without terms, as TermQuery does
        try (Directory dir = index(new Random(3), 300, 8); DirectoryReader reader = DirectoryReader.open(dir)) {
            IndexSearcher indexed = new IndexSearcher(reader);
            List<List<String>> tokens = draw(new Random(4), 8);
            ScoreDoc top = indexed.search(blocks(tokens, 1), 1).scoreDocs[0];
            Weight any = indexed.createWeight(indexed.rewrite(blocks(tokens, 1)), ScoreMode.COMPLETE_NO_SCORES, 1f);
            LeafReaderContext segment = reader.leaves().get(ReaderUtil.subIndex(top.doc, reader.leaves()));
            assertEquals(MatchesUtils.MATCH_WITH_NO_TERMS, any.matches(segment, top.doc - segment.docBase));
        }
    }
}
