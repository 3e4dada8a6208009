package io.neardup.fingerprint;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Feature weights {@code tf · idf · pos · length · title} ({@code weigh} in {@code ingest/weights.py}), with the
 * same float64 operations in the same order, so every weight is the same double as in Python.
 */
public final class Weights {
    private final FingerprintConfig config;
    private final IdfTable idf;
    private final Function<String, String> tag;

    public Weights(FingerprintConfig config, IdfTable idf, Function<String, String> tag) {
        this.config = config;
        this.idf = idf;
        this.tag = tag;
    }

    /** idf · pos · length: the part of a weight that depends on the word alone ({@code _word_factor}). */
    double wordFactor(String word) {
        double w = config.idf() ? idf.get(word) : 1.0;
        if (config.pos()) {
            w *= config.posFactor(tag.apply(word));
        }
        return w * config.lengthFactor(word.codePointCount(0, word.length()));
    }

    /** The weight of every distinct word of one document ({@code words} in text order, repeats counted). */
    public Map<String, Double> weigh(List<String> words, Set<String> titleWords) {
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (String w : words) {
            counts.merge(w, 1, Integer::sum);
        }
        Map<String, Double> weights = new LinkedHashMap<>(counts.size() * 2);
        for (Map.Entry<String, Integer> e : counts.entrySet()) {
            double factor = wordFactor(e.getKey());
            weights.put(e.getKey(), config.tf() ? factor * e.getValue() : factor);
        }
        if (config.title()) {
            for (String t : titleWords) {
                weights.computeIfPresent(t, (k, v) -> v * config.titleFactor());
            }
        }
        return weights;
    }
}
