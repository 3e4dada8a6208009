package io.neardup.fingerprint;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;

/** A word list the exporter wrote as Python parsed it: one word a line. */
final class WordList {
    private WordList() {}

    static Set<String> load(String name) {
        String resource = "/io/neardup/data/fingerprint/" + name;
        try (InputStream in = WordList.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + resource);
            }
            BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            Set<String> words = new HashSet<>();
            String line;
            while ((line = reader.readLine()) != null) {
                words.add(line);
            }
            return Set.copyOf(words);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
