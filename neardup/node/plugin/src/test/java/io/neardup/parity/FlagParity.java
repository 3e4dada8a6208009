package io.neardup.parity;

import io.neardup.flag.Assigner;
import io.neardup.flag.Assignment;
import io.neardup.flag.Candidate;
import io.neardup.flag.CandidateRule;
import io.neardup.flag.Fingerprinted;
import io.neardup.flag.VerifyConfig;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Flagging of a whole corpus, document by document, as flagging with a perfect candidate search would do it. Each
 * input line is one document in document order: a JSON string holding the JSON object of its stored fields
 * ({@code schema.record_fields}) plus {@code id} and {@code indexed_at}. Every line is read before the first answer,
 * because the candidate rule is over the whole pool (as Python's {@code cluster_records} applies it).
 *
 * <p>A document's candidates are the earlier documents {@link CandidateRule} admits; each is handed to the
 * {@link Assigner} as a search would return it: read from doc values (seed 0 only, from {@code hex}) with the cluster
 * Java assigned it. Canonicals outside the candidates are "fetched" whole (from {@code _source}).
 *
 * <p>Answer per document: {@code {"candidates": [positions], "cluster": id, "duplicate_of": id|null,
 * "distance": int|null, "similarity": float|null}} with the similarity rounded as stored. Arguments
 * {@code name=value} override {@link VerifyConfig#DEFAULT} ({@code max_distance}, {@code min_jaccard},
 * {@code near_jaccard}, {@code use_sketch}, {@code mu}, {@code min_combined}) and set {@code min_shared}.
 */
public final class FlagParity {
    private FlagParity() {}

    public static void main(String[] args) {
        Map<String, String> options = new HashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException("arguments are name=value, not " + arg);
            }
            options.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        VerifyConfig d = VerifyConfig.DEFAULT;
        VerifyConfig config = new VerifyConfig(
            Integer.parseInt(options.getOrDefault("max_distance", String.valueOf(d.maxDistance()))),
            Double.parseDouble(options.getOrDefault("min_jaccard", String.valueOf(d.minJaccard()))),
            Double.parseDouble(options.getOrDefault("near_jaccard", String.valueOf(d.nearJaccard()))),
            Boolean.parseBoolean(options.getOrDefault("use_sketch", String.valueOf(d.useSketch()))),
            Double.parseDouble(options.getOrDefault("mu", String.valueOf(d.mu()))),
            Double.parseDouble(options.getOrDefault("min_combined", String.valueOf(d.minCombined())))
        );
        CandidateRule rule = CandidateRule.withMinShared(
            Integer.parseInt(options.getOrDefault("min_shared", String.valueOf(CandidateRule.DEFAULT_MIN_SHARED))));

        List<Map<String, Object>> docs = new ArrayList<>();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                docs.add(MiniJson.object(Lines.decode(line)));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> answers = flag(docs, config, rule);
        try (BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8))) {
            for (String answer : answers) {
                out.write(answer);
                out.write('\n');
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static List<String> flag(List<Map<String, Object>> docs, VerifyConfig config, CandidateRule rule) {
        int n = docs.size();
        List<Fingerprinted> full = new ArrayList<>(n);
        List<Fingerprinted> fromDocValues = new ArrayList<>(n);
        String[] ids = new String[n];
        for (int k = 0; k < n; k++) {
            Map<String, Object> doc = docs.get(k);
            ids[k] = (String) doc.get("id");
            full.add(Fingerprinted.fromSource(doc));
            fromDocValues.add(Fingerprinted.fromDocValues(
                (String) doc.get("hex"), (String) doc.get("minhash"), (String) doc.get("exact"),
                (String) doc.get("status"), (String) doc.get("meta_minhash")));
        }
        int[][] earlier = rule.earlier(full);
        Assigner assigner = new Assigner(config);
        Map<String, Integer> written = new HashMap<>();
        String[] clusters = new String[n];
        List<String> out = new ArrayList<>(n);
        for (int j = 0; j < n; j++) {
            List<Candidate> candidates = new ArrayList<>(earlier[j].length);
            for (int i : earlier[j]) {
                Map<String, Object> doc = docs.get(i);
                candidates.add(new Candidate(ids[i], fromDocValues.get(i), (String) doc.get("version"), clusters[i],
                    (String) doc.get("indexed_at")));
            }
            Assignment a = assigner.assign(ids[j], full.get(j), candidates, id -> {
                Integer at = written.get(id);
                return at == null ? null : full.get(at);
            });
            clusters[j] = a.cluster();
            written.put(ids[j], j);
            out.add(answer(earlier[j], a));
        }
        return out;
    }

    private static String answer(int[] candidates, Assignment a) {
        StringBuilder b = new StringBuilder("{\"candidates\": [");
        for (int k = 0; k < candidates.length; k++) {
            b.append(k == 0 ? "" : ", ").append(candidates[k]);
        }
        b.append("], \"cluster\": ").append(Lines.encode(a.cluster()));
        b.append(", \"duplicate_of\": ").append(a.duplicateOf() == null ? "null" : Lines.encode(a.duplicateOf()));
        b.append(", \"distance\": ").append(a.storedDistance() == null ? "null" : a.storedDistance().toString());
        b.append(", \"similarity\": ").append(a.storedSimilarity() == null ? "null" : a.storedSimilarity().toString());
        return b.append('}').toString();
    }
}
