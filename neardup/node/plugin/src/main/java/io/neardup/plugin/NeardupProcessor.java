package io.neardup.plugin;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;

import org.elasticsearch.ingest.AbstractProcessor;
import org.elasticsearch.ingest.ConfigurationUtils;
import org.elasticsearch.ingest.IngestDocument;
import org.elasticsearch.ingest.Processor;

import io.neardup.flag.Assignment;

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
 * document has none yet (a re-fingerprinted document keeps its place in document order).
 *
 * <p>With {@code "flag": true} it also assigns the document's cluster as the Python service's flagging does, and
 * writes the assignment fields ({@code schema.assignment_fields}) between the fingerprint fields and
 * {@code indexed_at}; the processor is then asynchronous (a candidate search per document, {@link Flagger}), and a
 * document without an {@code _id} fails (a cluster is named by a document id).
 *
 * <p>Every problem with one document (no text, text that is not a string or is too long, a fingerprinter that
 * throws) fails that document alone, with a message naming the field and the document; nothing here may take the
 * node down.
 */
public final class NeardupProcessor extends AbstractProcessor {
    public static final String TYPE = "neardup";
    /**
     * The default of {@code max_chars}: the Python service's limit ({@code NEARDUP_MAX_TEXT_CHARS}'s default in
     * {@code neardup/config.py}), in code points.
     */
    static final int MAX_TEXT_CHARS = 2_000_000;

    private final String field;
    private final String titleField;
    private final String targetField;
    private final boolean ignoreMissing;
    private final int maxTextChars;
    private final Fingerprints fingerprints;
    private final IndexedAt clock;
    private final FlagSettings flag;
    private final Flagger flagger;

    NeardupProcessor(String tag, String description, String field, String titleField, String targetField, boolean ignoreMissing,
            int maxTextChars, Fingerprints fingerprints, IndexedAt clock) {
        this(tag, description, field, titleField, targetField, ignoreMissing, maxTextChars, fingerprints, clock, null, null);
    }

    /** With {@code flag} and {@code flagger} (both or neither): a processor that also assigns clusters. */
    NeardupProcessor(String tag, String description, String field, String titleField, String targetField, boolean ignoreMissing,
            int maxTextChars, Fingerprints fingerprints, IndexedAt clock, FlagSettings flag, Flagger flagger) {
        super(tag, description);
        this.field = field;
        this.titleField = titleField;
        this.targetField = targetField;
        this.ignoreMissing = ignoreMissing;
        this.maxTextChars = maxTextChars;
        this.fingerprints = fingerprints;
        this.clock = clock;
        if ((flag == null) != (flagger == null)) {
            throw new IllegalArgumentException("flag settings and a flagger go together");
        }
        this.flag = flag;
        this.flagger = flagger;
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

    int maxTextChars() {
        return maxTextChars;
    }

    /** The flagging settings, or null for a processor that fingerprints only. */
    FlagSettings flagSettings() {
        return flag;
    }

    /** Flagging waits for a search, so the pipeline calls {@link #execute(IngestDocument, BiConsumer)}. */
    @Override
    public boolean isAsync() {
        return flag != null;
    }

    @Override
    public IngestDocument execute(IngestDocument document) {
        if (flag != null) {
            throw new UnsupportedOperationException("a flagging neardup processor runs asynchronously");
        }
        Prepared prepared = prepare(document);
        if (prepared != null) {
            write(document, prepared, Map.of(), prepared.indexedAt() == null ? clock.next() : null);
        }
        return document;
    }

    /**
     * With {@code "flag": true}: fingerprint (on this thread, as without it), then the cluster assignment
     * ({@link Flagger}), which ends by calling {@code handler} on whichever thread finished it.
     */
    @Override
    public void execute(IngestDocument document, BiConsumer<IngestDocument, Exception> handler) {
        if (flag == null) {
            super.execute(document, handler);
            return;
        }
        Prepared prepared;
        try {
            prepared = prepare(document);
        } catch (Exception e) {
            handler.accept(null, e);
            return;
        }
        if (prepared == null) {
            handler.accept(document, null);
            return;
        }
        String id = document.getMetadata().getId();
        String index = document.getMetadata().getIndex();
        if (id == null) {
            handler.accept(null, new IllegalArgumentException("flagging needs the document's _id, and " + describe(document)
                + " has none: give every document of the bulk request an _id (a cluster is named by its first document's id)"));
            return;
        }
        if (SIMULATED_INDEX.equals(index)) { // no index can have that name: a _simulate document without its own
            handler.accept(null, new IllegalArgumentException("flagging searches the document's index, and " + describe(document)
                + " names none: give each document of a _simulate request its _index and _id (it is then flagged, and held in "
                + "the node's window of recent documents, as if written)"));
            return;
        }
        AtomicBoolean answered = new AtomicBoolean();
        flagger.flag(index, targetField, id, prepared.fields(), prepared.indexedAt(), flag, new Flagger.Sink() {
            @Override
            public void write(Assignment assignment, String indexedAt) {
                Map<String, Object> assigned = new LinkedHashMap<>();
                assigned.put(FlagFields.CLUSTER, assignment.cluster());
                assigned.put(FlagFields.DUPLICATE_OF, assignment.duplicateOf());
                assigned.put(FlagFields.DISTANCE, assignment.storedDistance());
                assigned.put(FlagFields.SIMILARITY, assignment.storedSimilarity());
                assigned.put(FlagFields.IS_DUPLICATE, assignment.isDuplicate());
                NeardupProcessor.this.write(document, prepared, assigned, prepared.indexedAt() == null ? indexedAt : null);
            }

            @Override
            public void done(Exception failure) {
                if (answered.compareAndSet(false, true)) {
                    handler.accept(failure == null ? document : null, failure);
                }
            }
        });
    }

    /** The {@code _index} a {@code _simulate} request gives a document that names none. */
    static final String SIMULATED_INDEX = "_index";

    /** A document's fingerprint fields and its existing {@code indexed_at} (null when it has none). */
    private record Prepared(Map<String, Object> fields, boolean targetExists, String indexedAt) {}

    /** Validates and fingerprints a document; null when it has no text and {@code ignore_missing} lets it through. */
    private Prepared prepare(IngestDocument document) {
        Object rawText = document.getFieldValue(field, Object.class, true);
        if (rawText == null) {
            if (ignoreMissing) {
                return null;
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
        Object existing = target == null ? null : ((Map<?, ?>) target).get(IndexedAt.FIELD);
        // as a search hit's time reads (nine fraction digits), so the window orders the two alike
        return new Prepared(fields, target != null, existing == null ? null : IndexedAt.canonical(existing.toString()));
    }

    /**
     * Writes the fingerprint fields, then {@code assigned} (the assignment fields, or none), then {@code indexedAt}
     * unless null: one new object in {@code record_fields}' order as Python writes it, or field by field into an
     * existing target object (whose {@code indexed_at} is kept).
     */
    private void write(IngestDocument document, Prepared prepared, Map<String, Object> assigned, String indexedAt) {
        Map<String, Object> fields = new LinkedHashMap<>(prepared.fields());
        fields.putAll(assigned);
        if (prepared.targetExists() == false) {
            fields.put(IndexedAt.FIELD, indexedAt);
            document.setFieldValue(targetField, fields);
            return;
        }
        for (Map.Entry<String, Object> entry : fields.entrySet()) {
            document.setFieldValue(targetField + "." + entry.getKey(), entry.getValue());
        }
        if (indexedAt != null) {
            document.setFieldValue(targetField + "." + IndexedAt.FIELD, indexedAt);
        }
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
     * ({@code title}), {@code target_field} ({@code neardup}), {@code ignore_missing}, {@code max_chars} (the longest
     * text in code points, 2,000,000 as the Python service's {@code NEARDUP_MAX_TEXT_CHARS}) and {@code flag} (false) are
     * optional, and with {@code flag} also {@code max_candidates} (500), {@code min_shared} (1) and
     * {@code window_seconds} (5), which without it are refused rather than silently ignored. A wrong type, an empty
     * name or a value out of range is a parse error naming the property, and Elasticsearch itself refuses keys left
     * over, so a mistyped definition never reaches a document.
     */
    public static final class Factory implements Processor.Factory {
        static final String FIELD = "field";
        static final String TITLE_FIELD = "title_field";
        static final String TARGET_FIELD = "target_field";
        static final String IGNORE_MISSING = "ignore_missing";
        static final String MAX_CHARS = "max_chars";
        static final String FLAG = "flag";
        static final String MAX_CANDIDATES = "max_candidates";
        static final String MIN_SHARED = "min_shared";
        static final String WINDOW_SECONDS = "window_seconds";

        private final Fingerprints fingerprints;
        private final Warmup warmup;
        private final IndexedAt clock;
        private final int maxTextChars;
        private final Flagger flagger;

        Factory(Fingerprints fingerprints, Warmup warmup, IndexedAt clock, int maxTextChars) {
            this(fingerprints, warmup, clock, maxTextChars, null);
        }

        /** {@code flagger} null: a factory that cannot flag (unit tests without a node), and says so. */
        Factory(Fingerprints fingerprints, Warmup warmup, IndexedAt clock, int maxTextChars, Flagger flagger) {
            this.fingerprints = fingerprints;
            this.warmup = warmup;
            this.clock = clock;
            this.maxTextChars = maxTextChars;
            this.flagger = flagger;
        }

        @Override
        public NeardupProcessor create(Map<String, Processor.Factory> registry, String tag, String description,
                Map<String, Object> config) {
            String field = nonEmpty(tag, FIELD, ConfigurationUtils.readStringProperty(TYPE, tag, config, FIELD));
            String titleField = nonEmpty(tag, TITLE_FIELD, ConfigurationUtils.readStringProperty(TYPE, tag, config, TITLE_FIELD, "title"));
            String targetField = nonEmpty(tag, TARGET_FIELD,
                ConfigurationUtils.readStringProperty(TYPE, tag, config, TARGET_FIELD, "neardup"));
            apart(tag, targetField, FIELD, field);
            apart(tag, targetField, TITLE_FIELD, titleField);
            boolean ignoreMissing = ConfigurationUtils.readBooleanProperty(TYPE, tag, config, IGNORE_MISSING, false);
            int maxChars = ConfigurationUtils.readIntProperty(TYPE, tag, config, MAX_CHARS, maxTextChars);
            if (maxChars < 1) {
                throw ConfigurationUtils.newConfigurationException(TYPE, tag, MAX_CHARS,
                    "must be a positive number of characters, not " + maxChars);
            }
            boolean flag = ConfigurationUtils.readBooleanProperty(TYPE, tag, config, FLAG, false);
            FlagSettings settings = flagSettings(tag, config, flag);
            if (flag && flagger == null) {
                throw ConfigurationUtils.newConfigurationException(TYPE, tag, FLAG,
                    "flagging needs a node client, and this processor factory has none");
            }
            warmup.start();
            return new NeardupProcessor(tag, description, field, titleField, targetField, ignoreMissing, maxChars, fingerprints,
                clock, settings, flag ? flagger : null);
        }

        /** The flagging keys, each checked on its own so a refusal names it; null without {@code flag}. */
        private static FlagSettings flagSettings(String tag, Map<String, Object> config, boolean flag) {
            FlagSettings defaults = FlagSettings.defaults();
            if (flag == false) {
                for (String key : new String[] { MAX_CANDIDATES, MIN_SHARED, WINDOW_SECONDS }) {
                    if (config.containsKey(key)) {
                        throw ConfigurationUtils.newConfigurationException(TYPE, tag, key,
                            "applies only to flagging; set \"flag\": true or remove it");
                    }
                }
                return null;
            }
            int maxCandidates = ConfigurationUtils.readIntProperty(TYPE, tag, config, MAX_CANDIDATES, defaults.maxCandidates());
            if (maxCandidates < 1 || maxCandidates > FlagSettings.MAX_RESULT_WINDOW) {
                throw ConfigurationUtils.newConfigurationException(TYPE, tag, MAX_CANDIDATES,
                    "must be between 1 and " + FlagSettings.MAX_RESULT_WINDOW + " (a search's size), not " + maxCandidates);
            }
            int minShared = ConfigurationUtils.readIntProperty(TYPE, tag, config, MIN_SHARED, defaults.minShared());
            if (minShared < 1 || minShared > FlagSettings.TOKENS) {
                throw ConfigurationUtils.newConfigurationException(TYPE, tag, MIN_SHARED,
                    "must be between 1 and " + FlagSettings.TOKENS + " (the (seed, block) tokens of a fingerprint), not " + minShared);
            }
            double windowSeconds = defaults.windowSeconds();
            if (config.containsKey(WINDOW_SECONDS)) {
                Object raw = config.get(WINDOW_SECONDS);
                if (raw instanceof Number == false && raw instanceof String == false) {
                    throw ConfigurationUtils.newConfigurationException(TYPE, tag, WINDOW_SECONDS, "must be a number of seconds");
                }
                Double read;
                try {
                    read = ConfigurationUtils.readDoubleProperty(TYPE, tag, config, WINDOW_SECONDS);
                } catch (RuntimeException e) {
                    throw ConfigurationUtils.newConfigurationException(TYPE, tag, WINDOW_SECONDS, "must be a number of seconds, not [" + raw + "]");
                }
                windowSeconds = read;
                if ((windowSeconds > 0 && windowSeconds <= FlagSettings.MAX_WINDOW_SECONDS) == false) {
                    throw ConfigurationUtils.newConfigurationException(TYPE, tag, WINDOW_SECONDS,
                        "must be more than 0 and at most " + (int) FlagSettings.MAX_WINDOW_SECONDS + " seconds, not " + raw);
                }
            }
            return new FlagSettings(maxCandidates, minShared, windowSeconds, defaults.verify());
        }

        /**
         * The processor writes its object at {@code target}, so the field it reads ({@code property}: {@code read})
         * may be neither that object, nor inside it, nor hold it: every document would fail, or lose its text.
         */
        private static void apart(String tag, String target, String property, String read) {
            if (target.equals(read) || read.startsWith(target + ".") || target.startsWith(read + ".")) {
                throw ConfigurationUtils.newConfigurationException(TYPE, tag, TARGET_FIELD,
                    "[" + target + "] overlaps " + property + " [" + read + "]: the processor writes its fields there");
            }
        }

        private static String nonEmpty(String tag, String property, String value) {
            if (value.isBlank()) {
                throw ConfigurationUtils.newConfigurationException(TYPE, tag, property, "must name a field, not be empty");
            }
            return value;
        }
    }
}
