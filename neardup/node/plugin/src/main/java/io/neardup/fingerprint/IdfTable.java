package io.neardup.fingerprint;

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

/** Word to inverse document frequency, unknown words at the median ({@code IdfTable} in {@code ingest/weights.py}). */
public final class IdfTable {
    private final Map<String, Double> values;
    private final double median;

    IdfTable(Map<String, Double> values) {
        this.values = values;
        double[] ordered = values.values().stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(ordered);
        this.median = ordered.length == 0 ? 1.0 : ordered[ordered.length / 2];
    }

    /** The table packed into the plugin ({@code jieba/analyse/idf.txt}). */
    public static IdfTable load() {
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
            return new IdfTable(values);
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
        Double v = values.get(word);
        return v == null ? median : v;
    }
}
