package io.neardup.plugin;

import java.util.Map;

import org.elasticsearch.common.Strings;

import io.neardup.flag.Fingerprinted;
import io.neardup.flag.VerifyConfig;
import io.neardup.parity.Lines;
import io.neardup.parity.MiniJson;

/**
 * The candidate search body a flagging processor sends ({@link CandidateSearch#source}), for a Python test to compare
 * with {@code lookup.py}'s {@code candidate_search} and {@code verify_filter}. Each input line is
 * a JSON string holding {@code {"id", "fields" (record_fields), "max_candidates", "min_shared", "target"}}; each
 * answer the body as Elasticsearch's own {@code toXContent} writes it.
 */
public final class QueryParity {
    private QueryParity() {}

    public static void main(String[] args) {
        Lines.serve(line -> {
            Map<String, Object> in = MiniJson.object(line);
            @SuppressWarnings("unchecked")
            Map<String, Object> fields = (Map<String, Object>) in.get("fields");
            FlagSettings settings = new FlagSettings(((Number) in.get("max_candidates")).intValue(),
                ((Number) in.get("min_shared")).intValue(), FlagSettings.DEFAULT_WINDOW_SECONDS, VerifyConfig.DEFAULT);
            Fingerprinted doc = Fingerprinted.fromSource(fields);
            String target = (String) in.getOrDefault("target", "neardup");
            return Strings.toString(CandidateSearch.source(target, (String) in.get("id"), fields, doc, settings));
        });
    }
}
