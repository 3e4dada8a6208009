package io.neardup.text;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Traditional → Simplified Chinese exactly as the Python side folds it, {@code opencc.OpenCC("t2s").convert}
 * (OpenCC 1.4's C++ library): the same output for every string Python can convert.
 *
 * <p>It runs the conversions of OpenCC's {@code t2s.json} in order, first the {@code normalization} pass
 * (CJK compatibility ideographs to their unified forms, so {@code U+F900 豈} then folds like {@code 豈}),
 * then the conversion chain (one {@code short_circuit} group: phrases, then the tofu-risk extension
 * characters, then characters); see {@link OpenCcConversion} for how a step rewrites text. Both the list
 * of steps and every dictionary come from the exporter ({@code neardup/node/export/opencc_tables.py}),
 * which reads the very {@code .ocd2} files the Python binding loads, so nothing here is a copy that could
 * drift from Python's OpenCC.
 *
 * <p>The binding encodes its argument as UTF-8 first, so Python raises {@code UnicodeEncodeError} on a
 * lone surrogate; {@link #convert} refuses such text too, rather than inventing an answer Python never
 * gives.
 */
public final class T2S {
    private static final String DATA = "/io/neardup/data/opencc/";
    private static final String MANIFEST = "t2s.txt";

    private final List<OpenCcConversion> conversions;

    private T2S(List<OpenCcConversion> conversions) {
        this.conversions = List.copyOf(conversions);
    }

    /** The converter over the exported tables, loaded once per class loader on first use. */
    public static T2S shared() {
        return Holder.INSTANCE;
    }

    private static final class Holder {
        private static final T2S INSTANCE = load();
    }

    /**
     * {@code text} folded to Simplified, equal to Python's {@code OpenCC("t2s").convert(text)}.
     *
     * @throws IllegalArgumentException if {@code text} holds a lone surrogate, which Python cannot encode
     */
    public String convert(String text) {
        Objects.requireNonNull(text, "text");
        requireWellFormed(text);
        String out = text;
        for (OpenCcConversion conversion : conversions) {
            out = conversion.apply(out);
        }
        return out;
    }

    private static void requireWellFormed(String text) {
        for (int i = 0, n = text.length(); i < n; i++) {
            char c = text.charAt(i);
            if (!Character.isSurrogate(c)) {
                continue;
            }
            if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
                continue;
            }
            throw new IllegalArgumentException(String.format(
                "lone surrogate U+%04X at index %d: OpenCC converts UTF-8, which cannot encode it", (int) c, i));
        }
    }

    private static T2S load() {
        List<OpenCcConversion> conversions = new ArrayList<>();
        Map<String, OpenCcDict> dicts = new HashMap<>();
        List<String> lines = lines(MANIFEST);
        for (int number = 1; number <= lines.size(); number++) {
            String line = lines.get(number - 1);
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] fields = line.split("\t", -1);
            if (fields.length < 2) {
                throw new IllegalStateException(DATA + MANIFEST + ":" + number + ": no dictionary in " + line);
            }
            OpenCcConversion.Policy policy = switch (fields[0]) {
                case "short_circuit" -> OpenCcConversion.Policy.SHORT_CIRCUIT;
                case "union" -> OpenCcConversion.Policy.UNION;
                default -> throw new IllegalStateException(
                    DATA + MANIFEST + ":" + number + ": unknown match policy " + fields[0]);
            };
            List<OpenCcDict> group = new ArrayList<>();
            for (int f = 1; f < fields.length; f++) {
                group.add(dicts.computeIfAbsent(fields[f], T2S::dict));
            }
            conversions.add(new OpenCcConversion(policy, group));
        }
        if (conversions.isEmpty()) {
            throw new IllegalStateException(DATA + MANIFEST + ": no conversion");
        }
        return new T2S(conversions);
    }

    /** The exported dictionary {@code name}: lines of key TAB value [TAB value…]; OpenCC outputs the first. */
    private static OpenCcDict dict(String name) {
        String file = name + ".txt";
        Map<String, String> entries = new LinkedHashMap<>();
        List<String> lines = lines(file);
        for (int number = 1; number <= lines.size(); number++) {
            String line = lines.get(number - 1);
            if (line.isEmpty()) {
                continue;
            }
            String[] fields = line.split("\t", -1);
            if (fields.length < 2 || fields[0].isEmpty() || fields[1].isEmpty()) {
                throw new IllegalStateException(DATA + file + ":" + number + ": not key TAB value: " + line);
            }
            if (entries.put(fields[0], fields[1]) != null) {
                throw new IllegalStateException(DATA + file + ":" + number + ": duplicate key " + fields[0]);
            }
        }
        if (entries.isEmpty()) {
            throw new IllegalStateException(DATA + file + ": no entries");
        }
        return OpenCcDict.of(name, entries);
    }

    /** The lines of an exported resource, split at LF only, decoded as strict UTF-8. */
    private static List<String> lines(String file) {
        try (InputStream in = T2S.class.getResourceAsStream(DATA + file)) {
            if (in == null) {
                throw new IllegalStateException(
                    "missing resource " + DATA + file + " (the plugin is built with the exported OpenCC tables)");
            }
            String text = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(ByteBuffer.wrap(in.readAllBytes()))
                .toString();
            return List.of(text.split("\n", -1));
        } catch (CharacterCodingException e) {
            throw new IllegalStateException(DATA + file + " is not UTF-8", e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + DATA + file, e);
        }
    }
}
