package io.neardup.parity;

import io.neardup.text.Hmm;
import io.neardup.text.PreciseCut;
import io.neardup.text.Tags;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.function.Function;

/**
 * The segmenter's answers for {@code tests/plugin/test_cut_parity.py}: with argument {@code lcut} the words of
 * {@link PreciseCut#lcut}, with {@code hmm} those of {@link Hmm#cut} (JSON lists), with {@code tag} the
 * {@link Tags#tag} of each line's text (a JSON string).
 *
 * <p>With a second argument {@code --each} every answer is flushed as soon as it is written, so a test can
 * keep one JVM open and ask it one text at a time: hypothesis then generates, and shrinks, example by example.
 */
public final class CutParity {
    private CutParity() {}

    public static void main(String[] args) {
        if (args.length < 1 || args.length > 2 || (args.length == 2 && !args[1].equals("--each"))) {
            throw new IllegalArgumentException("usage: CutParity lcut|hmm|tag [--each]");
        }
        Function<String, String> answer = switch (args[0]) {
            case "lcut" -> text -> Lines.encode(PreciseCut.shared().lcut(text));
            case "hmm" -> text -> Lines.encode(Hmm.shared().cut(text));
            case "tag" -> text -> Lines.encode(Tags.shared().tag(text));
            default -> throw new IllegalArgumentException("unknown mode " + args[0] + ": lcut, hmm or tag");
        };
        if (args.length == 2) {
            serveEach(answer);
        } else {
            Lines.serve(answer);
        }
    }

    /** {@link Lines#serve}, but flushing after every answer. */
    private static void serveEach(Function<String, String> answer) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
             Writer out = new OutputStreamWriter(System.out, StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                out.write(answer.apply(Lines.decode(line)));
                out.write('\n');
                out.flush();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
