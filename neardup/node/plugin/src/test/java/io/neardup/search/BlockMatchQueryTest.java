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

import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.NoMergePolicy;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.ConstantScoreQuery;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.IndexSearcher;
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
        List<List<String>> repeated = new ArrayList<>();
        for (List<String> field : tokens) {
            List<String> twice = new ArrayList<>(field);
            twice.addAll(field);
            repeated.add(twice);
        }
        assertEquals(blocks(tokens, 1), blocks(repeated, 1));
        assertEquals(blocks(tokens, 1).hashCode(), blocks(shuffled, 1).hashCode());
        assertNotEquals(blocks(tokens, 1), blocks(tokens, 2));
        assertThrows(IllegalArgumentException.class, () -> blocks(tokens, 0));
        assertThrows(IllegalArgumentException.class, () -> new BlockMatchQuery(FIELDS, List.of(), 1));
    }
}
