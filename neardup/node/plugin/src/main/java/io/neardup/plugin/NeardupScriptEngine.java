package io.neardup.plugin;

import io.neardup.search.SketchCheck;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import org.elasticsearch.index.fielddata.ScriptDocValues;
import org.elasticsearch.script.FilterScript;
import org.elasticsearch.script.LeafReaderContextSupplier;
import org.elasticsearch.script.ScriptContext;
import org.elasticsearch.script.ScriptEngine;

/**
 * Script language {@code neardup}, two filter scripts. It lives in the plugin (not only in the embedded node) so
 * that a user's cluster with the plugin installed runs lookups' second check where the candidates are, as the
 * embedded node does.
 *
 * <p>{@code hamming}: keeps documents whose long field (param {@code field}) holds a value within
 * {@code max_distance} bits of any value in param {@code fingerprints}. A full distribution would run this as a
 * Painless script; lang-painless is not published on Maven Central, so the embedded node needs this native
 * equivalent.
 *
 * <p>{@code verify}: the second check of {@code ingest/verify.py} for two fingerprinted documents
 * ({@link SketchCheck}), run where the candidates are, so a lookup returns verified matches instead of every
 * candidate. The {@code neardup_blocks} query runs the same check on its own matches when given these parameters.
 */
final class NeardupScriptEngine implements ScriptEngine {
    static final String LANG = "neardup";

    @Override
    public String getType() {
        return LANG;
    }

    @Override
    public Set<ScriptContext<?>> getSupportedContexts() {
        return Set.of(FilterScript.CONTEXT);
    }

    @Override
    public <T> T compile(String name, String source, ScriptContext<T> context, Map<String, String> options) {
        if (context.equals(FilterScript.CONTEXT) == false) {
            throw new IllegalArgumentException("lang [neardup] supports only the filter context, not [" + context.name + "]");
        }
        if ("verify".equals(source)) {
            return context.factoryClazz.cast(verifyFactory());
        }
        if ("hamming".equals(source) == false) {
            throw new IllegalArgumentException("unknown neardup script [" + source + "]; they are [hamming, verify]");
        }
        return context.factoryClazz.cast(hammingFactory());
    }

    /** Parameter {@code name} as a {@code type}, {@code absent} when not given; another type is the caller's error (400). */
    static <T> T param(Map<String, Object> params, String name, Class<T> type, T absent) {
        Object value = params.get(name);
        if (value == null) {
            return absent;
        }
        if (type.isInstance(value) == false) {
            throw new IllegalArgumentException("hamming: param [" + name + "] must be a " + type.getSimpleName().toLowerCase(Locale.ROOT)
                + ", not " + value.getClass().getSimpleName());
        }
        return type.cast(value);
    }

    static FilterScript.Factory hammingFactory() {
        return (params, lookup) -> {
            String field = param(params, "field", String.class, null);
            long[] queries;
            try {
                queries = SketchCheck.toLongs(params.get("fingerprints"));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("hamming: param [fingerprints]: " + e.getMessage(), e);
            }
            Number distance = param(params, "max_distance", Number.class, 3);
            int maxDistance;
            try {
                // 0 to 64, the bits of a fingerprint: 64 keeps every document; -1 none, and 65 was taken as 64
                maxDistance = (int) SketchCheck.wholeNumber(distance, "hamming: param [max_distance]", 0, 64);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(e.getMessage() + " (bits of a 64-bit fingerprint)", e);
            }
            if (field == null || queries.length == 0) {
                throw new IllegalArgumentException("hamming needs params [field] and a non-empty [fingerprints]");
            }
            return docReader -> new FilterScript(params, lookup, docReader) {
                @Override
                public boolean execute() {
                    ScriptDocValues<?> values = getDoc().get(field);
                    for (int i = 0; i < values.size(); i++) {
                        if (values.get(i) instanceof Number == false) {
                            throw new IllegalArgumentException("hamming: field [" + field + "] must be a long field, not "
                                + values.get(i).getClass().getSimpleName() + " values");
                        }
                        long value = ((Number) values.get(i)).longValue();
                        for (long query : queries) {
                            if (Long.bitCount(value ^ query) <= maxDistance) {
                                return true;
                            }
                        }
                    }
                    return false;
                }
            };
        };
    }

    static FilterScript.Factory verifyFactory() {
        return (params, lookup) -> {
            SketchCheck check = SketchCheck.fromParams(params);
            // refused here, when the script is built on each shard, as the neardup_blocks query refuses them: read
            // as they are, a field of another type failed the shards holding a candidate (a 500, or a 200 with
            // failed shards) and an unmapped one matched nothing
            if (lookup != null) {
                BlockMatchQueryBuilder.refuseUnreadable(check, lookup::fieldType, "");
            }
            return docReader -> {
                // read from the segment's doc values directly: through the script's generic document lookup a
                // candidate cost several microseconds before any of this check ran, and a lookup in a large index
                // checks about a thousand chance candidates
                if (!(docReader instanceof LeafReaderContextSupplier leaf)) {
                    throw new IllegalStateException("verify reads doc values, and this search gives it no segment");
                }
                SketchCheck.Leaf segment;
                try {
                    segment = check.open(leaf.getLeafReaderContext().reader());
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                return new FilterScript(params, lookup, docReader) {
                    private int doc;

                    @Override
                    public void setDocument(int docid) {
                        doc = docid; // the generic lookup is not positioned: execute reads only the segment's check
                    }

                    @Override
                    public boolean execute() {
                        try {
                            return segment.accepts(doc);
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    }
                };
            };
        };
    }
}
