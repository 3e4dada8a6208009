package io.neardup.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.elasticsearch.index.VersionType;
import org.elasticsearch.ingest.IngestDocument;
import org.junit.jupiter.api.Test;

/**
 * What the processor writes, and its error paths, with a stand-in fingerprinter (the real one's values are checked
 * against Python's in {@code tests/plugin/test_processor.py}, through a real node).
 */
final class NeardupProcessorTest {
    private static final long NOW = 1_700_000_000_123_456_789L;
    /** Each call: the text and title it was given. */
    private final List<List<String>> calls = new ArrayList<>();

    private Map<String, Object> fake(String text, String title) {
        calls.add(java.util.Arrays.asList(text, title));
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("fingerprint", List.of(1L, -2L));
        fields.put("hex", "0000000000000001");
        fields.put("status", "ok");
        fields.put("meta_minhash", null);
        return fields;
    }

    private NeardupProcessor processor(boolean ignoreMissing, int maxChars, Fingerprints fingerprints) {
        return new NeardupProcessor("t", null, "text", "title", "neardup", ignoreMissing, maxChars, fingerprints, new IndexedAt(() -> NOW));
    }

    private NeardupProcessor processor() {
        return processor(false, 10, this::fake);
    }

    private static IngestDocument doc(String id, Map<String, Object> source) {
        return new IngestDocument("news", id, 1, null, VersionType.INTERNAL, new HashMap<>(source));
    }

    private static IllegalArgumentException refused(NeardupProcessor processor, IngestDocument document) {
        return assertThrows(IllegalArgumentException.class, () -> processor.execute(document));
    }

    @Test
    void writesEveryFieldUnderTheTargetNullsIncludedAndTheTime() {
        IngestDocument document = doc("1", Map.of("text", "正文", "title", "标题", "other", 3));
        processor().execute(document);
        Map<String, Object> written = document.getFieldValue("neardup", Map.class);
        assertEquals(List.of(1L, -2L), written.get("fingerprint"));
        assertEquals("ok", written.get("status"));
        assertTrue(written.containsKey("meta_minhash"));
        assertNull(written.get("meta_minhash"));
        assertEquals("2023-11-14T22:13:20.123456789Z", written.get("indexed_at"));
        assertEquals(3, document.getFieldValue("other", Integer.class));
        assertEquals(List.of(List.of("正文", "标题")), calls);
    }

    @Test
    void theFieldsAreWrittenInOrderAsMutableCopies() {
        IngestDocument document = doc("1", Map.of("text", "正文"));
        processor().execute(document);
        Map<String, Object> written = document.getFieldValue("neardup", Map.class);
        assertEquals(List.of("fingerprint", "hex", "status", "meta_minhash", "indexed_at"), List.copyOf(written.keySet()));
        document.appendFieldValue("neardup.fingerprint", 3L); // a later processor may change them
        assertEquals(List.of(1L, -2L, 3L), document.getFieldValue("neardup.fingerprint", List.class));
    }

    @Test
    void aDocumentAlreadyIndexedKeepsItsTimeAndItsOtherFields() {
        Map<String, Object> nd = new HashMap<>(Map.of("indexed_at", "2020-01-01T00:00:00.000000000Z", "cluster", "c1"));
        IngestDocument document = doc("1", Map.of("text", "正文", "neardup", nd));
        processor().execute(document);
        assertEquals("2020-01-01T00:00:00.000000000Z", document.getFieldValue("neardup.indexed_at", String.class));
        assertEquals("c1", document.getFieldValue("neardup.cluster", String.class));
        assertEquals("ok", document.getFieldValue("neardup.status", String.class));
    }

    @Test
    void theTitleIsOptional() {
        processor().execute(doc("1", Map.of("text", "正文")));
        assertEquals(1, calls.size());
        assertEquals("正文", calls.get(0).get(0));
        assertNull(calls.get(0).get(1));
    }

    @Test
    void aMissingTextFailsNamingFieldAndDocument() {
        IllegalArgumentException e = refused(processor(), doc("doc-7", Map.of("title", "x")));
        assertTrue(e.getMessage().startsWith("field [text] is missing in document [doc-7] of index [news]"), e.getMessage());
        assertTrue(calls.isEmpty());
    }

    @Test
    void aNullTextFailsToo() {
        Map<String, Object> source = new HashMap<>();
        source.put("text", null);
        IllegalArgumentException e = refused(processor(), doc("d", source));
        assertTrue(e.getMessage().startsWith("field [text] is null in document [d]"), e.getMessage());
    }

    @Test
    void ignoreMissingLetsTheDocumentThroughUnchanged() {
        IngestDocument document = doc("1", Map.of("title", "x", "n", 1));
        Map<String, Object> before = new HashMap<>(document.getSource());
        assertSame(document, processor(true, 10, this::fake).execute(document));
        assertEquals(before, document.getSource());
        assertTrue(calls.isEmpty());
    }

    @Test
    void ignoreMissingDoesNotExcuseAWrongType() {
        IllegalArgumentException e = refused(processor(true, 10, this::fake), doc("1", Map.of("text", 42)));
        assertEquals("field [text] of document [1] of index [news] must be a string, not a number", e.getMessage());
    }

    @Test
    void aTextThatIsNotAStringFailsNamingFieldAndDocument() {
        assertTrue(refused(processor(), doc("a", Map.of("text", List.of("x")))).getMessage().endsWith("must be a string, not an array"));
        assertTrue(refused(processor(), doc("a", Map.of("text", Map.of()))).getMessage().endsWith("must be a string, not an object"));
        assertTrue(calls.isEmpty());
    }

    @Test
    void aTitleThatIsNotAStringFails() {
        IllegalArgumentException e = refused(processor(), doc("a", Map.of("text", "x", "title", true)));
        assertEquals("field [title] of document [a] of index [news] must be a string, not a boolean", e.getMessage());
    }

    @Test
    void theLimitCountsCharactersAsPythonDoes() {
        // five astral characters are ten UTF-16 units but five characters, as Python's len() counts them
        processor(false, 5, this::fake).execute(doc("ok", Map.of("text", "😀😀😀😀😀")));
        IllegalArgumentException e = refused(processor(false, 5, this::fake), doc("long", Map.of("text", "😀😀😀😀😀a")));
        assertEquals("field [text] of document [long] of index [news] has 6 characters; the limit is 5", e.getMessage());
        assertEquals(1, calls.size());
    }

    @Test
    void aTargetThatIsNotAnObjectFails() {
        IllegalArgumentException e = refused(processor(), doc("a", Map.of("text", "x", "neardup", "oops")));
        assertTrue(e.getMessage().startsWith("field [neardup] of document [a] of index [news] is a string, not an object"), e.getMessage());
    }

    @Test
    void aFailingFingerprinterFailsThatDocumentOnly() {
        NeardupProcessor broken = processor(false, 10, (text, title) -> {
            throw new UnsupportedOperationException("not assembled");
        });
        IngestDocument document = doc("x1", Map.of("text", "正文"));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> broken.execute(document));
        assertTrue(e.getMessage().startsWith("the neardup fingerprinter failed on field [text] of document [x1] of index [news]: "),
            e.getMessage());
        assertTrue(e.getMessage().contains("not assembled"));
        assertEquals(Map.of("text", "正文"), document.getSource());
    }

    @Test
    void anErrorThatWouldKillTheNodeBecomesADocumentFailure() {
        NeardupProcessor deep = processor(false, 10, (text, title) -> {
            throw new StackOverflowError();
        });
        assertThrows(IllegalStateException.class, () -> deep.execute(doc("x", Map.of("text", "t"))));
        NeardupProcessor unloadable = processor(false, 10, (text, title) -> {
            throw new NoClassDefFoundError("io/neardup/fingerprint/Fingerprinter$Holder");
        });
        assertThrows(IllegalStateException.class, () -> unloadable.execute(doc("x", Map.of("text", "t"))));
    }

    @Test
    void aDocumentWithoutAnIdIsNamedAsSuch() {
        IllegalArgumentException e = refused(processor(), doc(null, Map.of()));
        assertTrue(e.getMessage().contains("a document without an _id"), e.getMessage());
    }

    @Test
    void anotherTargetField() {
        NeardupProcessor processor = new NeardupProcessor(null, null, "body.text", "body.title", "meta.fp", false, 10, this::fake,
            new IndexedAt(() -> NOW));
        IngestDocument document = doc("1", Map.of("body", Map.of("text", "正文", "title", "题")));
        processor.execute(document);
        assertEquals("0000000000000001", document.getFieldValue("meta.fp.hex", String.class));
        assertEquals(List.of(List.of("正文", "题")), calls);
    }
}
