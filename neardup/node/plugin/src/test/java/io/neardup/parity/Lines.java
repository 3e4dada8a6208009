package io.neardup.parity;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * The line protocol between the Python parity tests and the Java side: every input line is one JSON string
 * (Python's {@code json.dumps}, ASCII with {@code \\u} escapes, so any text survives), every output line one
 * JSON value. Only strings and lists of strings are needed, so this tiny codec stands in for a JSON library.
 */
public final class Lines {
    private Lines() {}

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    /** Reads JSON string lines from stdin, writes {@code answer(text)} (already JSON) per line to stdout. */
    public static void serve(Function<String, String> answer) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
             BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                out.write(answer.apply(decode(line)));
                out.write('\n');
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The text of one JSON string literal. */
    public static String decode(String json) {
        String s = json.strip();
        if (s.length() < 2 || s.charAt(0) != '"' || s.charAt(s.length() - 1) != '"') {
            throw new IllegalArgumentException("not a JSON string: " + json);
        }
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 1; i < s.length() - 1; i++) {
            char c = s.charAt(i);
            if (c != '\\') {
                b.append(c);
                continue;
            }
            char e = s.charAt(++i);
            switch (e) {
                case '"', '\\', '/' -> b.append(e);
                case 'b' -> b.append('\b');
                case 'f' -> b.append('\f');
                case 'n' -> b.append('\n');
                case 'r' -> b.append('\r');
                case 't' -> b.append('\t');
                case 'u' -> {
                    b.append((char) Integer.parseInt(s.substring(i + 1, i + 5), 16));
                    i += 4;
                }
                default -> throw new IllegalArgumentException("bad escape \\" + e + " in " + json);
            }
        }
        return b.toString();
    }

    /** A JSON string literal, ASCII only (everything else escaped), as Python's json.dumps writes it. */
    public static String encode(String text) {
        StringBuilder b = new StringBuilder(text.length() + 2).append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                case '\b' -> b.append("\\b");
                case '\f' -> b.append("\\f");
                default -> {
                    if (c < 0x20 || c > 0x7e) {
                        b.append("\\u").append(HEX[c >>> 12]).append(HEX[(c >>> 8) & 0xf])
                            .append(HEX[(c >>> 4) & 0xf]).append(HEX[c & 0xf]);
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }

    /** A JSON array of strings, as {@code json.dumps(list)} with its default separators. */
    public static String encode(List<String> texts) {
        List<String> parts = new ArrayList<>(texts.size());
        for (String t : texts) {
            parts.add(encode(t));
        }
        return "[" + String.join(", ", parts) + "]";
    }
}
