package io.neardup.plugin;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.elasticsearch.ingest.AbstractProcessor;
import org.elasticsearch.ingest.ConfigurationUtils;
import org.elasticsearch.ingest.IngestDocument;
import org.elasticsearch.ingest.Processor;

/**
 * Ingest processor {@code neardup}: fingerprints a document's text (and title) inside Elasticsearch and writes the
 * {@code neardup.*} fingerprint fields as neardup's Python side writes them, so any client's bulk request into an
 * index with this pipeline produces documents that lookups, {@code neardup reconcile} and the service treat like
 * their own.
 *
 * <pre>{"neardup": {"field": "text", "title_field": "title", "target_field": "neardup", "ignore_missing": false}}</pre>
 *
 * <p>What it writes mirrors Python's fingerprint-only write (the fingerprint stage of {@code neardup dedupe}): every
 * field of {@code record_fields} under {@code target_field}, nulls included, and {@code indexed_at} only when the
 * document has none yet (a re-fingerprinted document keeps its place in document order). Cluster assignment
 * ({@code "flag": true}) is not part of this build and is refused when the pipeline is created.
 *
 * <p>Every problem with one document (no text, text that is not a string or is too long, a fingerprinter that
 * throws) fails that document alone, with a message naming the field and the document; nothing here may take the
 * node down.
 */
public final class NeardupProcessor extends AbstractProcessor {
    public static final String TYPE = "neardup";
    /** The Python service's limit ({@code NEARDUP_MAX_TEXT_CHARS}'s default in {@code neardup/config.py}), in code points. */
    static final int MAX_TEXT_CHARS = 2_000_000;

    private final String field;
    private final String titleField;
    private final String targetField;
    private final boolean ignoreMissing;
    private final int maxTextChars;
    private final Fingerprints fingerprints;
    private final IndexedAt clock;

    NeardupProcessor(String tag, String description, String field, String titleField, String targetField, boolean ignoreMissing,
            int maxTextChars, Fingerprints fingerprints, IndexedAt clock) {
        super(tag, description);
        this.field = field;
        this.titleField = titleField;
        this.targetField = targetField;
        this.ignoreMissing = ignoreMissing;
        this.maxTextChars = maxTextChars;
        this.fingerprints = fingerprints;
        this.clock = clock;
    }

    @Override
    public String getType() {
        return TYPE;
    }

    String field() {
        return field;
    }

    String titleField() {
        return titleField;
    }

    String targetField() {
        return targetField;
    }

    boolean ignoreMissing() {
        return ignoreMissing;
    }

    @Override
    public IngestDocument execute(IngestDocument document) {
        Object rawText = document.getFieldValue(field, Object.class, true);
        if (rawText == null) {
            if (ignoreMissing) {
                return document;
            }
            String what = document.hasField(field) ? "is null" : "is missing";
            throw new IllegalArgumentException("field [" + field + "] " + what + " in " + describe(document)
                + "; the neardup processor needs the text to fingerprint (\"ignore_missing\": true lets such documents through unchanged)");
        }
        String text = string(document, field, rawText);
        if (text.length() > maxTextChars) { // a cheap bound first: code points never outnumber UTF-16 units
            int chars = text.codePointCount(0, text.length());
            if (chars > maxTextChars) {
                throw new IllegalArgumentException("field [" + field + "] of " + describe(document) + " has " + chars
                    + " characters; the limit is " + maxTextChars);
            }
        }
        Object rawTitle = document.getFieldValue(titleField, Object.class, true);
        String title = rawTitle == null ? null : string(document, titleField, rawTitle);
        Object target = document.getFieldValue(targetField, Object.class, true);
        if (target != null && target instanceof Map == false) {
            throw new IllegalArgumentException("field [" + targetField + "] of " + describe(document) + " is " + kind(target)
                + ", not an object; the neardup processor writes its fields under it");
        }
        // copies: later processors of the pipeline may change what is written, and the fingerprinter's lists may be immutable
        Map<String, Object> fields = new LinkedHashMap<>();
        fingerprint(document, text, title).forEach((name, value) -> fields.put(name, IngestDocument.deepCopy(value)));
        if (target == null) { // one new object, its fields in record_fields' order as Python writes them
            fields.put(IndexedAt.FIELD, clock.next());
            document.setFieldValue(targetField, fields);
            return document;
        }
        for (Map.Entry<String, Object> entry : fields.entrySet()) {
            document.setFieldValue(targetField + "." + entry.getKey(), entry.getValue());
        }
        if (((Map<?, ?>) target).get(IndexedAt.FIELD) == null) {
            document.setFieldValue(targetField + "." + IndexedAt.FIELD, clock.next());
        }
        return document;
    }

    private Map<String, Object> fingerprint(IngestDocument document, String text, String title) {
        try {
            return fingerprints.fields(text, title);
        } catch (RuntimeException | StackOverflowError | LinkageError e) {
            // a bug or a missing table must cost this document, not the node: Elasticsearch treats an Error that
            // leaves a processor as fatal, and a deep regex or a failed table load throws one
            throw new IllegalStateException("the neardup fingerprinter failed on field [" + field + "] of " + describe(document)
                + ": " + e, e);
        }
    }

    private static String string(IngestDocument document, String name, Object value) {
        if (value instanceof String s) {
            return s;
        }
        throw new IllegalArgumentException("field [" + name + "] of " + describe(document) + " must be a string, not " + kind(value));
    }

    /** The document as a message names it: its id (none yet when Elasticsearch generates it after ingest) and index. */
    static String describe(IngestDocument document) {
        String id = document.getMetadata().getId();
        String index = document.getMetadata().getIndex();
        return (id == null ? "a document without an _id (Elasticsearch assigns it after ingest)" : "document [" + id + "]")
            + (index == null ? "" : " of index [" + index + "]");
    }

    /** A JSON type name for a value of a document, as a user wrote it. */
    static String kind(Object value) {
        if (value instanceof String) {
            return "a string";
        }
        if (value instanceof Number) {
            return "a number";
        }
        if (value instanceof Boolean) {
            return "a boolean";
        }
        if (value instanceof List<?>) {
            return "an array";
        }
        if (value instanceof Map<?, ?>) {
            return "an object";
        }
        return "of type [" + value.getClass().getName() + "]";
    }

    /**
     * Reads and checks a processor definition when a pipeline is put: {@code field} is required; {@code title_field}
     * ({@code title}), {@code target_field} ({@code neardup}), {@code ignore_missing} and {@code flag} (false) are
     * optional. A wrong type or an empty name is a parse error naming the property, and Elasticsearch itself refuses
     * keys left over, so a mistyped definition never reaches a document.
     */
    public static final class Factory implements Processor.Factory {
        static final String FIELD = "field";
        static final String TITLE_FIELD = "title_field";
        static final String TARGET_FIELD = "target_field";
        static final String IGNORE_MISSING = "ignore_missing";
        static final String FLAG = "flag";

        private final Fingerprints fingerprints;
        private final Warmup warmup;
        private final IndexedAt clock;
        private final int maxTextChars;

        Factory(Fingerprints fingerprints, Warmup warmup, IndexedAt clock, int maxTextChars) {
            this.fingerprints = fingerprints;
            this.warmup = warmup;
            this.clock = clock;
            this.maxTextChars = maxTextChars;
        }

        @Override
        public NeardupProcessor create(Map<String, Processor.Factory> registry, String tag, String description,
                Map<String, Object> config) {
            String field = nonEmpty(tag, FIELD, ConfigurationUtils.readStringProperty(TYPE, tag, config, FIELD));
            String titleField = nonEmpty(tag, TITLE_FIELD, ConfigurationUtils.readStringProperty(TYPE, tag, config, TITLE_FIELD, "title"));
            String targetField = nonEmpty(tag, TARGET_FIELD,
                ConfigurationUtils.readStringProperty(TYPE, tag, config, TARGET_FIELD, "neardup"));
            boolean ignoreMissing = ConfigurationUtils.readBooleanProperty(TYPE, tag, config, IGNORE_MISSING, false);
            boolean flag = ConfigurationUtils.readBooleanProperty(TYPE, tag, config, FLAG, false);
            if (flag) {
                throw ConfigurationUtils.newConfigurationException(TYPE, tag, FLAG,
                    "flagging (cluster assignment) is not available in this build of the neardup plugin; "
                        + "remove [flag] or set it to false to write the fingerprint fields only");
            }
            warmup.start();
            return new NeardupProcessor(tag, description, field, titleField, targetField, ignoreMissing, maxTextChars, fingerprints,
                clock);
        }

        private static String nonEmpty(String tag, String property, String value) {
            if (value.isBlank()) {
                throw ConfigurationUtils.newConfigurationException(TYPE, tag, property, "must name a field, not be empty");
            }
            return value;
        }
    }
}
