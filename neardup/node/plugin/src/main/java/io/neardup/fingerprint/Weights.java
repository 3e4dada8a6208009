package io.neardup.fingerprint;

import io.neardup.text.Lexicon;
import io.neardup.text.Tags;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Feature weights {@code tf · idf · pos · length · title} ({@code weigh} in {@code ingest/weights.py}), with the
 * same float64 operations in the same order, so every weight is the same double as in Python.
 */
public final class Weights {
    private final FingerprintConfig config;
    private final IdfTable idf;
    private final Tags tags;
    private final Lexicon lexicon;
    /** The part-of-speech factor of each tag met so far: a few dozen tags, each looked up for every word. */
    private final Map<String, Double> posFactors = new ConcurrentHashMap<>();

    public Weights(FingerprintConfig config, IdfTable idf, Tags tags, Lexicon lexicon) {
        this.config = config;
        this.idf = idf;
        this.tags = tags;
        this.lexicon = lexicon;
    }

    /** idf · pos · length: the part of a weight that depends on the word alone ({@code _word_factor}). */
    double wordFactor(String word) {
        int key = lexicon.key(word);
        double w = config.idf() ? idf.get(word, key) : 1.0;
        if (config.pos()) {
            w *= posFactor(tags.tag(word, key));
        }
        return w * config.lengthFactor(word.codePointCount(0, word.length()));
    }

    private double posFactor(String tag) {
        Double factor = posFactors.get(tag);
        return factor != null ? factor : posFactors.computeIfAbsent(tag, config::posFactor);
    }

    /** The weight of every distinct word of one document ({@code words} in text order, repeats counted). */
    public Features weigh(List<String> words, Set<String> titleWords) {
        WordCounts counts = new WordCounts(words);
        int n = counts.size();
        double[] weights = new double[n];
        for (int i = 0; i < n; i++) {
            double factor = wordFactor(counts.word(i));
            weights[i] = config.tf() ? factor * counts.count(i) : factor;
        }
        if (config.title()) {
            for (String t : titleWords) {
                int at = counts.indexOf(t);
                if (at >= 0) {
                    weights[at] = weights[at] * config.titleFactor();
                }
            }
        }
        return new Features(counts.words(), weights);
    }
}
