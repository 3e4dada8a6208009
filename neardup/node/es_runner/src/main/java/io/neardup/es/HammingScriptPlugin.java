package io.neardup.es;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.index.fielddata.ScriptDocValues;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.plugins.ScriptPlugin;
import org.elasticsearch.script.FilterScript;
import org.elasticsearch.script.ScriptContext;
import org.elasticsearch.script.ScriptEngine;

/**
 * Script language {@code neardup}, source {@code hamming}: a filter that keeps documents whose long
 * field (param {@code field}) holds a value within {@code max_distance} bits of any value in param
 * {@code fingerprints}. The distribution would run this as a Painless script; lang-painless is not
 * published on Maven Central, so the embedded node carries this native equivalent.
 */
public final class HammingScriptPlugin extends Plugin implements ScriptPlugin {

    @Override
    public ScriptEngine getScriptEngine(Settings settings, Collection<ScriptContext<?>> contexts) {
        return new HammingEngine();
    }

    static final class HammingEngine implements ScriptEngine {
        @Override
        public String getType() {
            return "neardup";
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
            if ("hamming".equals(source) == false) {
                throw new IllegalArgumentException("unknown neardup script [" + source + "]; the only one is [hamming]");
            }
            FilterScript.Factory factory = (params, lookup) -> {
                String field = (String) params.get("field");
                long[] queries = toLongs(params.get("fingerprints"));
                int maxDistance = ((Number) params.getOrDefault("max_distance", 3)).intValue();
                if (field == null || queries.length == 0) {
                    throw new IllegalArgumentException("hamming needs params [field] and a non-empty [fingerprints]");
                }
                return docReader -> new FilterScript(params, lookup, docReader) {
                    @Override
                    public boolean execute() {
                        ScriptDocValues<?> values = getDoc().get(field);
                        for (int i = 0; i < values.size(); i++) {
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
            return context.factoryClazz.cast(factory);
        }
    }

    static long[] toLongs(Object value) {
        if (value instanceof Number number) {
            return new long[] { number.longValue() };
        }
        if (value instanceof List<?> list) {
            long[] out = new long[list.size()];
            for (int i = 0; i < out.length; i++) {
                out[i] = ((Number) list.get(i)).longValue();
            }
            return out;
        }
        return new long[0];
    }
}
