package io.neardup.parity;

import io.neardup.fingerprint.Fingerprinter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The whole pipeline: each input is {@code <title length>:<title><text>}, or {@code -:<text>} without a title;
 * each answer the fingerprint fields as a JSON object (keys in the order written).
 */
public final class FingerprintParity {
    private FingerprintParity() {}

    public static void main(String[] args) {
        Fingerprinter fp = Fingerprinter.shared();
        Lines.serve(line -> {
            int colon = line.indexOf(':');
            String head = line.substring(0, colon);
            String title = null;
            String text;
            if (head.equals("-")) {
                text = line.substring(colon + 1);
            } else {
                int end = line.offsetByCodePoints(colon + 1, Integer.parseInt(head));
                title = line.substring(colon + 1, end);
                text = line.substring(end);
            }
            return json(fp.fields(text, title));
        });
    }

    static String json(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof String s) {
            return Lines.encode(s);
        }
        if (value instanceof Long || value instanceof Integer) {
            return value.toString();
        }
        if (value instanceof List<?> list) {
            List<String> parts = new ArrayList<>(list.size());
            for (Object o : list) {
                parts.add(json(o));
            }
            return "[" + String.join(", ", parts) + "]";
        }
        if (value instanceof Map<?, ?> map) {
            List<String> parts = new ArrayList<>(map.size());
            for (Map.Entry<?, ?> e : map.entrySet()) {
                parts.add(Lines.encode((String) e.getKey()) + ": " + json(e.getValue()));
            }
            return "{" + String.join(", ", parts) + "}";
        }
        throw new IllegalArgumentException("no JSON form for " + value.getClass());
    }
}
