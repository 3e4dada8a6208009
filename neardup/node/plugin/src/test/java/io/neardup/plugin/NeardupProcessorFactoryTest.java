package io.neardup.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.elasticsearch.ElasticsearchParseException;
import org.elasticsearch.ingest.ConfigurationUtils;
import org.elasticsearch.ingest.Processor;
import org.junit.jupiter.api.Test;

/** A processor definition is read as documented, and every malformed one is refused naming the property. */
final class NeardupProcessorFactoryTest {
    private final List<Runnable> submitted = new ArrayList<>();
    private final NeardupProcessor.Factory factory = new NeardupProcessor.Factory(
        (text, title) -> Map.of(),
        new Warmup(submitted::add, (text, title) -> Map.of()),
        new IndexedAt(() -> 0L),
        NeardupProcessor.MAX_TEXT_CHARS
    );

    private NeardupProcessor create(Map<String, Object> definition) {
        return factory.create(Map.of(), "t1", null, new HashMap<>(definition));
    }

    /** Through Elasticsearch's own reader, which also handles tag/description and refuses left-over keys. */
    private Processor read(Map<String, Object> definition) throws Exception {
        return ConfigurationUtils.readProcessor(Map.of(NeardupProcessor.TYPE, factory), null, NeardupProcessor.TYPE,
            new HashMap<>(definition));
    }

    private static ElasticsearchParseException refused(Runnable create) {
        return assertThrows(ElasticsearchParseException.class, create::run);
    }

    @Test
    void onlyFieldIsRequiredAndTheOthersDefault() {
        NeardupProcessor processor = create(Map.of("field", "body"));
        assertEquals("body", processor.field());
        assertEquals("title", processor.titleField());
        assertEquals("neardup", processor.targetField());
        assertFalse(processor.ignoreMissing());
        assertEquals("neardup", processor.getType());
        assertEquals("t1", processor.getTag());
    }

    @Test
    void everyDocumentedKeyIsReadAndConsumed() {
        Map<String, Object> config = new HashMap<>(Map.of("field", "text", "title_field", "headline", "target_field", "fp",
            "ignore_missing", true, "flag", false));
        NeardupProcessor processor = factory.create(Map.of(), null, null, config);
        assertTrue(config.isEmpty(), "left over: " + config);
        assertEquals("headline", processor.titleField());
        assertEquals("fp", processor.targetField());
        assertTrue(processor.ignoreMissing());
    }

    @Test
    void aMissingFieldIsRefusedNamingIt() {
        ElasticsearchParseException e = refused(() -> create(Map.of("title_field", "title")));
        assertEquals("[field] required property is missing", e.getMessage());
        assertEquals(List.of("field"), e.getMetadata("es.property_name"));
        assertEquals(List.of("neardup"), e.getMetadata("es.processor_type"));
    }

    @Test
    void wrongTypesAreRefusedNamingTheProperty() {
        ElasticsearchParseException e = refused(() -> create(Map.of("field", 7)));
        assertTrue(e.getMessage().startsWith("[field] property isn't a string"), e.getMessage());
        e = refused(() -> create(Map.of("field", "text", "title_field", List.of("a"))));
        assertEquals(List.of("title_field"), e.getMetadata("es.property_name"));
        e = refused(() -> create(Map.of("field", "text", "ignore_missing", "yes")));
        assertTrue(e.getMessage().startsWith("[ignore_missing] property isn't a boolean"), e.getMessage());
        e = refused(() -> create(Map.of("field", "text", "flag", 1)));
        assertEquals(List.of("flag"), e.getMetadata("es.property_name"));
    }

    @Test
    void emptyNamesAreRefused() {
        assertEquals("[field] must name a field, not be empty", refused(() -> create(Map.of("field", ""))).getMessage());
        ElasticsearchParseException e = refused(() -> create(Map.of("field", "text", "target_field", " ")));
        assertEquals(List.of("target_field"), e.getMetadata("es.property_name"));
    }

    @Test
    void flaggingIsRefusedInThisBuild() {
        ElasticsearchParseException e = refused(() -> create(Map.of("field", "text", "flag", true)));
        assertTrue(e.getMessage().startsWith("[flag] flagging (cluster assignment) is not available in this build"), e.getMessage());
        assertEquals(List.of("flag"), e.getMetadata("es.property_name"));
        create(Map.of("field", "text", "flag", false));
    }

    @Test
    void elasticsearchRefusesUnknownKeys() {
        Exception e = assertThrows(ElasticsearchParseException.class, () -> read(Map.of("field", "text", "feild", "x")));
        assertEquals("processor [neardup] doesn't support one or more provided configuration parameters [feild]", e.getMessage());
    }

    @Test
    void elasticsearchHandlesTagAndDescription() throws Exception {
        Processor processor = read(Map.of("field", "text", "tag", "fp", "description", "fingerprints"));
        assertEquals("fp", processor.getTag());
        assertEquals("fingerprints", processor.getDescription());
    }

    @Test
    void theTablesStartLoadingOnceWhateverTheNumberOfPipelines() {
        assertEquals(0, submitted.size());
        create(Map.of("field", "text"));
        create(Map.of("field", "body"));
        assertEquals(1, submitted.size());
    }
}
