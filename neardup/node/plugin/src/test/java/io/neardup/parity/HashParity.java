package io.neardup.parity;

import io.neardup.fingerprint.Hashes;
import io.neardup.fingerprint.SimHash;
import io.neardup.fingerprint.Sketch;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The hashing stages on their own. Modes: {@code xxh3} (text → hex digest), {@code sketch} (content characters →
 * base64 sketch), {@code simhash} (lines {@code feature TAB weight-as-hex-float} → the 16 fingerprints in hex).
 */
public final class HashParity {
    private HashParity() {}

    public static void main(String[] args) {
        switch (args[0]) {
            case "xxh3" -> Lines.serve(text -> Lines.encode(Hashes.xxh3Hex(text)));
            case "sketch" -> Lines.serve(text -> Lines.encode(Sketch.encode(Sketch.of(text))));
            case "simhash" -> Lines.serve(text -> {
                Map<String, Double> weights = new LinkedHashMap<>();
                if (!text.isEmpty()) {
                    for (String line : text.split("\n", -1)) {
                        int tab = line.lastIndexOf('\t');
                        weights.put(line.substring(0, tab), Double.parseDouble(line.substring(tab + 1)));
                    }
                }
                long[] fps = SimHash.fingerprints(weights, 16, 16);
                String[] hex = new String[fps.length];
                for (int i = 0; i < fps.length; i++) {
                    hex[i] = Hashes.hex(fps[i]);
                }
                return Lines.encode(List.of(hex));
            });
            default -> throw new IllegalArgumentException("mode: xxh3, sketch or simhash");
        }
    }
}
