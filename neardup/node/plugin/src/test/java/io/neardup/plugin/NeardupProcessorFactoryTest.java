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
        assertEquals(NeardupProcessor.MAX_TEXT_CHARS, processor.maxTextChars());
        assertEquals("neardup", processor.getType());
        assertEquals("t1", processor.getTag());
    }

    @Test
    void everyDocumentedKeyIsReadAndConsumed() {
        Map<String, Object> config = new HashMap<>(Map.of("field", "text", "title_field", "headline", "target_field", "fp",
            "ignore_missing", true, "max_chars", 1000, "flag", false));
        NeardupProcessor processor = factory.create(Map.of(), null, null, config);
        assertTrue(config.isEmpty(), "left over: " + config);
        assertEquals("headline", processor.titleField());
        assertEquals("fp", processor.targetField());
        assertTrue(processor.ignoreMissing());
        assertEquals(1000, processor.maxTextChars());
    }

    @Test
    void aLimitBelowOneCharacterIsRefused() {
        ElasticsearchParseException e = refused(() -> create(Map.of("field", "text", "max_chars", 0)));
        assertEquals("[max_chars] must be a positive number of characters, not 0", e.getMessage());
        e = refused(() -> create(Map.of("field", "text", "max_chars", "many")));
        assertEquals(List.of("max_chars"), e.getMetadata("es.property_name"));
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
    void aTargetOverlappingTheFieldsReadIsRefused() {
        for (Map<String, Object> definition : List.<Map<String, Object>>of(
            Map.of("field", "text", "target_field", "text"),
            Map.of("field", "doc.text", "target_field", "doc"),
            Map.of("field", "text", "target_field", "text.neardup"),
            Map.of("field", "text", "title_field", "fp.title", "target_field", "fp"))) {
            ElasticsearchParseException e = refused(() -> create(definition));
            assertEquals(List.of("target_field"), e.getMetadata("es.property_name"), definition.toString());
            assertTrue(e.getMessage().contains("overlaps"), e.getMessage());
        }
        assertEquals("textual", create(Map.of("field", "text", "target_field", "textual")).targetField());
    }

    /** A factory able to flag: its flagger is never asked to do anything while pipelines are created. */
    private final NeardupProcessor.Factory flagging = new NeardupProcessor.Factory(
        (text, title) -> Map.of(),
        new Warmup(submitted::add, (text, title) -> Map.of()),
        new IndexedAt(() -> 0L),
        NeardupProcessor.MAX_TEXT_CHARS,
        new Flagger(null, new FlagWindow(10, () -> 0L), new IndexedAt(() -> 0L), Runnable::run, null, new SearchGate(1),
            Retrying.DEFAULT, (millis, run) -> run.run())
    );

    private NeardupProcessor flag(Map<String, Object> definition) {
        Map<String, Object> config = new HashMap<>(definition);
        config.put("field", "text");
        config.put("flag", true);
        NeardupProcessor processor = flagging.create(Map.of(), "t1", null, config);
        assertTrue(config.isEmpty(), "left over: " + config);
        return processor;
    }

    private ElasticsearchParseException flagRefused(Map<String, Object> definition, String property, String reason) {
        ElasticsearchParseException e = refused(() -> flag(definition));
        assertTrue(e.getMessage().startsWith("[" + property + "] " + reason), e.getMessage());
        assertEquals(List.of(property), e.getMetadata("es.property_name"));
        return e;
    }

    @Test
    void flaggingHasThePythonServicesDefaults() {
        NeardupProcessor processor = flag(Map.of());
        assertTrue(processor.isAsync());
        assertEquals(new FlagSettings(500, 1, 5.0, io.neardup.flag.VerifyConfig.DEFAULT), processor.flagSettings());
        assertFalse(create(Map.of("field", "text", "flag", false)).isAsync());
        assertEquals(null, create(Map.of("field", "text")).flagSettings());
    }

    @Test
    void everyFlagSettingIsRead() {
        FlagSettings settings = flag(Map.of("max_candidates", 50, "min_shared", 3, "window_seconds", 0.5)).flagSettings();
        assertEquals(new FlagSettings(50, 3, 0.5, io.neardup.flag.VerifyConfig.DEFAULT), settings);
        assertEquals(500_000_000L, settings.windowNanos());
        assertEquals(10_000, flag(Map.of("max_candidates", 10_000, "min_shared", 64, "window_seconds", 3600)).flagSettings()
            .maxCandidates());
    }

    @Test
    void badFlagSettingsAreRefusedNamingThem() {
        flagRefused(Map.of("max_candidates", 0), "max_candidates", "must be between 1 and 10000");
        flagRefused(Map.of("max_candidates", 10_001), "max_candidates", "must be between 1 and 10000");
        flagRefused(Map.of("max_candidates", "many"), "max_candidates", "");
        flagRefused(Map.of("min_shared", 0), "min_shared", "must be between 1 and 64");
        flagRefused(Map.of("min_shared", 65), "min_shared", "must be between 1 and 64");
        flagRefused(Map.of("window_seconds", 0), "window_seconds", "must be more than 0 and at most 3600");
        flagRefused(Map.of("window_seconds", -1.5), "window_seconds", "must be more than 0");
        flagRefused(Map.of("window_seconds", 3601), "window_seconds", "must be more than 0 and at most 3600");
        flagRefused(Map.of("window_seconds", "soon"), "window_seconds", "must be a number of seconds");
        flagRefused(Map.of("window_seconds", List.of(1)), "window_seconds", "must be a number of seconds");
    }

    @Test
    void flagSettingsWithoutFlaggingAreRefused() {
        for (String key : List.of("max_candidates", "min_shared", "window_seconds")) {
            ElasticsearchParseException e = refused(() -> create(Map.of("field", "text", key, 2)));
            assertEquals("[" + key + "] applies only to flagging; set \"flag\": true or remove it", e.getMessage());
        }
    }

    @Test
    void aFactoryWithoutAClientCannotFlag() {
        ElasticsearchParseException e = refused(() -> create(Map.of("field", "text", "flag", true)));
        assertEquals(List.of("flag"), e.getMetadata("es.property_name"));
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
