package io.neardup.text;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/**
 * Reads the tab-separated files {@code neardup/node/export/jieba_tables.py} writes under
 * {@code /io/neardup/data/jieba/}. They are the Python side's own tables, so a missing file or a malformed row
 * means a broken build, not bad input: it fails loudly, naming the file and line.
 */
final class JiebaData {
    private static final String ROOT = "/io/neardup/data/jieba/";

    private JiebaData() {}

    /** Calls {@code row} with the {@code fields} fields of every line of {@code name}. */
    static void rows(String name, int fields, Consumer<String[]> row) {
        String path = ROOT + name;
        InputStream stream = JiebaData.class.getResourceAsStream(path);
        if (stream == null) {
            throw new IllegalStateException("missing plugin resource " + path + " (exported by jieba_tables.py)");
        }
        try (BufferedReader in = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8), 1 << 16)) {
            String line;
            int number = 0;
            while ((line = in.readLine()) != null) {
                number++;
                String[] parts = split(line, fields);
                if (parts == null) {
                    throw new IllegalStateException(path + ":" + number + ": expected " + fields + " tab-separated fields");
                }
                try {
                    row.accept(parts);
                } catch (RuntimeException e) {
                    throw new IllegalStateException(path + ":" + number + ": " + e.getMessage(), e);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + path, e);
        }
    }

    /** Exactly {@code fields} tab-separated fields (empty ones kept), or null. */
    private static String[] split(String line, int fields) {
        String[] out = new String[fields];
        int from = 0;
        for (int i = 0; i < fields - 1; i++) {
            int tab = line.indexOf('\t', from);
            if (tab < 0) {
                return null;
            }
            out[i] = line.substring(from, tab);
            from = tab + 1;
        }
        if (line.indexOf('\t', from) >= 0) {
            return null;
        }
        out[fields - 1] = line.substring(from);
        return out;
    }
}
