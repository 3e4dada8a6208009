package io.neardup.parity;

import com.ibm.icu.text.Normalizer2;
import io.neardup.text.Normalize;
import io.neardup.text.PyCase;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Answers each text with what the Unicode layer makes of it: {@code [NFKC, lower, normalize,
 * content_chars(normalize), content_chars(text), is_punctuation(text)]} (the last as "true"/"false"). Each
 * answer is flushed at once, so a test can keep one JVM open and ask it text by text (hypothesis then
 * shrinks a failure without starting a JVM per example); batch use through {@code run_main} works the same.
 */
public final class NormalizeParity {
    private NormalizeParity() {}

    private static final Normalizer2 NFKC = Normalizer2.getNFKCInstance();

    public static void main(String[] args) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
             Writer out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                out.write(answer(Lines.decode(line)));
                out.write('\n');
                out.flush();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String answer(String text) {
        String normalized = Normalize.normalize(text);
        return Lines.encode(List.of(
            NFKC.normalize(text),
            PyCase.lower(text),
            normalized,
            Normalize.contentChars(normalized),
            Normalize.contentChars(text),
            Boolean.toString(Normalize.isPunctuation(text))));
    }
}
