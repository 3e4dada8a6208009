package io.neardup.plugin;

import io.neardup.flag.Similarity;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.lucene.index.BinaryDocValues;
import org.apache.lucene.index.DocValues;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.SortedSetDocValues;
import org.apache.lucene.store.ByteArrayDataInput;
import org.apache.lucene.util.BytesRef;
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
 * <p>{@code verify}: the second check of {@code ingest/verify.py} for two fingerprinted documents, run where the
 * candidates are, so a lookup returns verified matches instead of every candidate. The candidate's sketch is read
 * from the binary doc values of {@code sketch_field} (little-endian uint32, sorted, distinct), its seed-0
 * fingerprint from the hex keyword {@code hex_field}. It keeps a document when the bottom-k Jaccard estimate
 * reaches {@code min_jaccard}, or when the fingerprints are within {@code max_distance} bits and the estimate
 * reaches {@code near_jaccard}; the estimate is computed as the Python reference computes it (the same integer
 * counts, one double division).
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

    static FilterScript.Factory hammingFactory() {
        return (params, lookup) -> {
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
    }

    static FilterScript.Factory verifyFactory() {
        return (params, lookup) -> {
            String sketchField = (String) params.get("sketch_field");
            String hexField = (String) params.get("hex_field");
            long[] sketch = toLongs(params.get("sketch"));
            Object fingerprint = params.get("fingerprint");
            if (sketchField == null || hexField == null || fingerprint instanceof Number == false) {
                throw new IllegalArgumentException("verify needs params [sketch_field], [hex_field], [sketch] and [fingerprint]");
            }
            long main = ((Number) fingerprint).longValue();
            int maxDistance = ((Number) params.getOrDefault("max_distance", 3)).intValue();
            double minJaccard = ((Number) params.getOrDefault("min_jaccard", 0.35)).doubleValue();
            double nearJaccard = ((Number) params.getOrDefault("near_jaccard", 0.2)).doubleValue();
            int k = ((Number) params.getOrDefault("sketch_size", 128)).intValue();
            return docReader -> {
                // read from the segment's doc values directly: through the script's generic document lookup a
                // candidate cost several microseconds before any of this check ran, and a lookup in a large index
                // checks about a thousand chance candidates
                if (!(docReader instanceof LeafReaderContextSupplier leaf)) {
                    throw new IllegalStateException("verify reads doc values, and this search gives it no segment");
                }
                LeafReader reader = leaf.getLeafReaderContext().reader();
                BinaryDocValues sketches;
                SortedSetDocValues hexes;
                try {
                    sketches = DocValues.getBinary(reader, sketchField);
                    hexes = DocValues.getSortedSet(reader, hexField);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                return new FilterScript(params, lookup, docReader) {
                    private int doc;

                    @Override
                    public void setDocument(int docid) {
                        doc = docid; // the generic lookup is not positioned: execute reads only the iterators above
                    }

                    @Override
                    public boolean execute() {
                        try {
                            return check(doc);
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    }

                    private boolean check(int docid) throws IOException {
                        if (sketches.advanceExact(docid) == false) {
                            return false;
                        }
                        // a binary field's doc value: the number of values, then each value's length and bytes
                        // (sorted); the first value, as the field's script doc values give it
                        BytesRef raw = sketches.binaryValue();
                        ByteArrayDataInput in = new ByteArrayDataInput(raw.bytes, raw.offset, raw.length);
                        if (in.readVInt() == 0) {
                            return false;
                        }
                        int length = in.readVInt();
                        double similarity = Similarity.jaccard(sketch, sketch.length, raw.bytes, in.getPosition(), length / 4, k);
                        // the fingerprint is read only when the similarity alone does not decide: most candidates
                        // share a block by chance, have a similarity near 0, and are refused without it
                        if (similarity >= minJaccard) {
                            return true;
                        }
                        if (similarity < nearJaccard || hexes.advanceExact(docid) == false) {
                            return false;
                        }
                        long other = Long.parseUnsignedLong(hexes.lookupOrd(hexes.nextOrd()).utf8ToString(), 16);
                        return Long.bitCount(main ^ other) <= maxDistance;
                    }
                };
            };
        };
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
