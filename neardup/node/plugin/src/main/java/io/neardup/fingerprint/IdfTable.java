package io.neardup.fingerprint;

import io.neardup.text.Lexicon;
import io.neardup.text.PyChars;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Word to inverse document frequency, unknown words at the median ({@code IdfTable} in {@code ingest/weights.py}).
 *
 * <p>Most words of the table are keys of jieba's dictionary, so the value of every key (the median for a key
 * the table lacks) sits in an array indexed by {@link Lexicon#key}: the caller walks the trie once per word
 * for both its tag and its IDF. Only the table's other words stay in a map.
 */
public final class IdfTable {
    private final Lexicon lexicon;
    private final double[] byKey;
    private final Map<String, Double> others;
    private final double median;

    IdfTable(Map<String, Double> values, Lexicon lexicon) {
        double[] ordered = values.values().stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(ordered);
        this.median = ordered.length == 0 ? 1.0 : ordered[ordered.length / 2];
        this.lexicon = lexicon;
        this.byKey = new double[lexicon.size()];
        Arrays.fill(byKey, median);
        Map<String, Double> rest = new HashMap<>();
        for (Map.Entry<String, Double> e : values.entrySet()) {
            int key = lexicon.key(e.getKey());
            if (key != Lexicon.NONE) {
                byKey[key] = e.getValue();
            } else {
                rest.put(e.getKey(), e.getValue());
            }
        }
        this.others = Map.copyOf(rest);
    }

    /** The table packed into the plugin ({@code jieba/analyse/idf.txt}), keyed by the dictionary's {@link Lexicon}. */
    public static IdfTable load(Lexicon lexicon) {
        String resource = "/io/neardup/data/fingerprint/idf.txt";
        try (InputStream in = IdfTable.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + resource);
            }
            BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            Map<String, Double> values = new HashMap<>();
            String line;
            while ((line = reader.readLine()) != null) {
                List<String> parts = pySplit(line);
                if (parts.size() == 2) {
                    values.put(parts.get(0), Double.parseDouble(parts.get(1)));
                }
            }
            return new IdfTable(values, lexicon);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Python's {@code str.split()}: runs of whitespace separate, none at either end. */
    static List<String> pySplit(String line) {
        List<String> out = new ArrayList<>();
        int start = -1;
        for (int i = 0; i < line.length(); ) {
            int cp = line.codePointAt(i);
            if (PyChars.isSpace(cp)) {
                if (start >= 0) {
                    out.add(line.substring(start, i));
                    start = -1;
                }
            } else if (start < 0) {
                start = i;
            }
            i += Character.charCount(cp);
        }
        if (start >= 0) {
            out.add(line.substring(start));
        }
        return out;
    }

    public double get(String word) {
        return get(word, lexicon.key(word));
    }

    /** {@link #get(String)} for a caller that already has {@code word}'s {@link Lexicon#key}. */
    public double get(String word, int key) {
        if (key != Lexicon.NONE) {
            return byKey[key];
        }
        Double v = others.get(word);
        return v == null ? median : v;
    }
}
