package io.neardup.bench;

import io.neardup.fingerprint.Fingerprinter;
import io.neardup.parity.Lines;
import io.neardup.text.PreciseCut;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/**
 * Single-thread throughput of the Java pipeline over texts read from stdin (one JSON string a line): one
 * warm-up pass (tables loaded, code compiled), then {@code repeats} timed passes; prints
 * {@code <mode> <median seconds> <characters>}. Modes: {@code fields} (the whole fingerprint) and {@code cut}
 * (jieba's precise cut alone, what {@code jieba.lcut} does in Python).
 */
public final class FingerprintThroughput {
    private FingerprintThroughput() {}

    public static void main(String[] args) throws IOException {
        int repeats = Integer.parseInt(args[0]);
        List<String> texts = new ArrayList<>();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                texts.add(Lines.decode(line));
            }
        }
        long chars = texts.stream().mapToLong(t -> t.codePointCount(0, t.length())).sum();
        Fingerprinter fp = Fingerprinter.shared();
        PreciseCut cut = PreciseCut.shared();
        for (int a = 1; a < args.length; a++) {
            String mode = args[a];
            Consumer<String> run = switch (mode) {
                case "fields" -> t -> fp.fields(t, null);
                case "cut" -> cut::lcut;
                default -> throw new IllegalArgumentException("mode: fields or cut");
            };
            texts.forEach(run);
            double[] seconds = new double[repeats];
            for (int r = 0; r < repeats; r++) {
                long start = System.nanoTime();
                texts.forEach(run);
                seconds[r] = (System.nanoTime() - start) / 1e9;
            }
            Arrays.sort(seconds);
            System.out.println(mode + " " + seconds[repeats / 2] + " " + chars);
        }
    }
}
