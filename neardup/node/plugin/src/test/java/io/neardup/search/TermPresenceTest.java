package io.neardup.search;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.IntStream;

import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.FilterLeafReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.NoMergePolicy;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.apache.lucene.util.BytesRef;
import org.junit.jupiter.api.Test;

/**
 * {@link TermPresence}: a filter never calls a held term absent and calls most others absent; it is built where most
 * sought terms are absent and not where most are present; it keeps to its budget; a closed segment's filters go.
 */
class TermPresenceTest {
    /** One segment: field "few" holds 200 distinct terms, field "all" every one of 0..999. */
    private static Directory segment() throws IOException {
        Directory dir = new ByteBuffersDirectory();
        try (IndexWriter writer = new IndexWriter(dir, new IndexWriterConfig().setMergePolicy(NoMergePolicy.INSTANCE))) {
            for (int d = 0; d < 1_000; d++) {
                Document doc = new Document();
                doc.add(new StringField("few", "t" + (d % 200) * 7, Field.Store.NO));
                doc.add(new StringField("all", "t" + d, Field.Store.NO));
                writer.addDocument(doc);
            }
        }
        return dir;
    }

    @Test
    void aFilterHoldsEveryTermAndCallsMostOthersAbsent() throws IOException {
        try (Directory dir = segment(); DirectoryReader reader = DirectoryReader.open(dir)) {
            Terms terms = reader.leaves().get(0).reader().terms("few");
            TermPresence.Filter filter = TermPresence.Filter.of(terms.iterator(), terms.size());
            Set<String> held = new HashSet<>();
            for (int v = 0; v < 200; v++) {
                held.add("t" + v * 7);
                assertTrue(filter.mightContain(TermPresence.key(new BytesRef("t" + v * 7))));
            }
            int present = 0;
            int absent = 0;
            for (int v = 0; v < 100_000; v++) {
                if (held.contains("t" + v) == false) {
                    absent++;
                    present += filter.mightContain(TermPresence.key(new BytesRef("t" + v))) ? 1 : 0;
                }
            }
            assertTrue(present < absent / 100, present + " of " + absent + " absent terms called present");
            assertEquals(4096 / 8, filter.bytes()); // 200 terms x 16 bits, rounded up to a power of two
        }
    }

    @Test
    void aFieldGetsAFilterOnlyWhereMostSoughtTermsAreAbsent() throws IOException {
        TermPresence presence = new TermPresence(64, 0.5, Long.MAX_VALUE);
        try (Directory dir = segment(); DirectoryReader reader = DirectoryReader.open(dir)) {
            LeafReader leaf = reader.leaves().get(0).reader();
            Random random = new Random(7);
            for (int q = 0; q < 10; q++) {
                List<BytesRef> sought = random.ints(16, 0, 1_000).mapToObj(v -> new BytesRef("t" + v)).toList();
                new BlockMatchQuery(List.of("few", "all"), List.of(sought, sought), 1, null, presence).match(leaf);
            }
            // "few" holds about 1 in 7 of the values sought, "all" every one
            assertNotNull(presence.field(leaf, "few").filter(leaf.terms("few")));
            assertNull(presence.field(leaf, "all").filter(leaf.terms("all")));
            assertEquals(4096 / 8, presence.usedBytes());
            assertEquals(1, presence.segments());
        }
        assertEquals(0, presence.usedBytes());
        assertEquals(0, presence.segments());
    }

    @Test
    void filtersStayWithinTheBudget() throws IOException {
        TermPresence presence = new TermPresence(0, 1.0, 4096 / 8 + 100);
        try (Directory dir = segment(); DirectoryReader reader = DirectoryReader.open(dir)) {
            LeafReader leaf = reader.leaves().get(0).reader();
            assertNotNull(presence.field(leaf, "few").filter(leaf.terms("few")));
            assertNull(presence.field(leaf, "all").filter(leaf.terms("all"))); // 1,000 terms: 2 KiB more than is left
            assertEquals(4096 / 8, presence.usedBytes());
            BlockMatchQuery.Matches matches = new BlockMatchQuery(List.of("few", "all"),
                List.of(List.of(new BytesRef("t7"), new BytesRef("t8")), List.of(new BytesRef("t7"))), 1, null, presence).match(leaf);
            assertEquals(List.of(1, 7, 201, 401, 601, 801), Arrays.stream(matches.docs(), 0, matches.size()).boxed().toList());
        }
    }

    @Test
    void aFieldWhoseSoughtTermsTheFilterCallsAbsentIsNotSought() throws IOException {
        TermPresence presence = new TermPresence(0, 1.0, Long.MAX_VALUE);
        try (Directory dir = segment(); DirectoryReader reader = DirectoryReader.open(dir)) {
            LeafReader leaf = reader.leaves().get(0).reader();
            TermPresence.Filter filter = presence.field(leaf, "few").filter(leaf.terms("few"));
            List<BytesRef> absent = IntStream.range(0, 5_000)
                .mapToObj(v -> new BytesRef("u" + v))
                .filter(t -> filter.mightContain(TermPresence.key(t)) == false)
                .limit(16)
                .toList();
            assertEquals(16, absent.size());
            IteratorCounting counting = new IteratorCounting(leaf);
            assertNull(new BlockMatchQuery(List.of("few"), List.of(absent), 1, null, presence).match(counting));
            assertEquals(0, counting.iterators, "a terms enum was made for a field with nothing to seek");
            List<BytesRef> oneHeld = new ArrayList<>(absent);
            oneHeld.add(new BytesRef("t7"));
            BlockMatchQuery.Matches matches = new BlockMatchQuery(List.of("few"), List.of(oneHeld), 1, null, presence).match(counting);
            assertEquals(List.of(1, 201, 401, 601, 801), Arrays.stream(matches.docs(), 0, matches.size()).boxed().toList());
            assertEquals(1, counting.iterators);
        }
    }

    /** A segment that counts the terms enums made of its fields. */
    private static final class IteratorCounting extends FilterLeafReader {
        int iterators;

        IteratorCounting(LeafReader in) {
            super(in);
        }

        @Override
        public Terms terms(String field) throws IOException {
            Terms terms = super.terms(field);
            return terms == null ? null : new FilterLeafReader.FilterTerms(terms) {
                @Override
                public TermsEnum iterator() throws IOException {
                    iterators++;
                    return super.iterator();
                }
            };
        }

        @Override
        public CacheHelper getCoreCacheHelper() {
            return in.getCoreCacheHelper();
        }

        @Override
        public CacheHelper getReaderCacheHelper() {
            return in.getReaderCacheHelper();
        }
    }

    @Test
    void badSettingsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new TermPresence(-1, 0.5, 1));
        assertThrows(IllegalArgumentException.class, () -> new TermPresence(1, 1.5, 1));
        assertThrows(IllegalArgumentException.class, () -> new TermPresence(1, 0.5, -1));
    }
}
