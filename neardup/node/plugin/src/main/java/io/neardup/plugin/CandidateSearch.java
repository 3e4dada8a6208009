package io.neardup.plugin;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.elasticsearch.action.search.SearchRequest;
import org.elasticsearch.common.document.DocumentField;
import org.elasticsearch.index.query.MatchNoneQueryBuilder;
import org.elasticsearch.index.query.QueryBuilder;
import org.elasticsearch.index.query.QueryBuilders;
import org.elasticsearch.search.SearchHit;
import org.elasticsearch.search.builder.SearchSourceBuilder;

import io.neardup.flag.Candidate;
import io.neardup.flag.Fingerprinted;
import io.neardup.flag.Similarity;
import io.neardup.flag.VerifyConfig;
import io.neardup.search.SketchCheck;

/**
 * One document's candidate search, as the Python service makes it ({@code candidate_search}) on a cluster with this
 * plugin: {@code candidate_query} (at least min_shared of the block tokens on {@code b0..b3}, through the plugin's
 * {@code neardup_blocks} query, or the same exact hash, filtered to the same fingerprint version; too-short texts by
 * exact hash and status),
 * the plugin's second check inside that query ({@code verify_params}: it runs on the shards, so the
 * {@code max_candidates} cap is spent on real matches, not on chance block matches of a large index), the document's
 * own id excluded, read from doc values only ({@code CANDIDATE_DOC_VALUES}, no {@code _source}). The request
 * ({@link #request}) also asks for the document's own stored copy, apart from the candidates
 * ({@link #sourceWithOwnCopy}).
 *
 * <p>Field names are relative to the processor's {@code target_field} ({@code neardup} for Python's).
 */
final class CandidateSearch {
    private CandidateSearch() {}

    /**
     * The query of {@code candidate_query} on a cluster with this plugin ({@code native}), without the exclusion: the
     * plugin's {@code neardup_blocks} query over the document's block tokens, which finds and ranks as one
     * constant-score {@code term} clause per token would, keeping those that pass {@code check} (the second check, or
     * null), or {@code ok} with the same exact hash; too-short texts by exact hash and status.
     */
    static QueryBuilder candidateQuery(String target, Map<String, Object> fields, int minShared, SketchCheck check) {
        String status = (String) fields.get(FlagFields.STATUS);
        QueryBuilder version = QueryBuilders.termQuery(path(target, FlagFields.VERSION), (String) fields.get(FlagFields.VERSION));
        if (Fingerprinted.EMPTY.equals(status)) {
            return new MatchNoneQueryBuilder();
        }
        if (Fingerprinted.OK.equals(status) == false) {
            return QueryBuilders.boolQuery()
                .filter(version)
                .filter(QueryBuilders.termQuery(path(target, FlagFields.EXACT), (String) fields.get(FlagFields.EXACT)))
                .filter(QueryBuilders.termQuery(path(target, FlagFields.STATUS), status));
        }
        Map<String, List<String>> tokens = new LinkedHashMap<>();
        int count = 0;
        for (String block : FlagFields.BLOCKS) {
            List<String> values = new ArrayList<>();
            for (Object token : (List<?>) fields.get(block)) {
                values.add((String) token);
            }
            tokens.put(path(target, block), values);
            count += values.size();
        }
        BlockMatchQueryBuilder blocks = new BlockMatchQueryBuilder(tokens, Math.max(1, Math.min(minShared, count)), check);
        String exact = (String) fields.get(FlagFields.EXACT);
        if (exact == null || exact.isEmpty()) { // read without its hash: no copy can be told by it
            return QueryBuilders.boolQuery().filter(version).must(blocks);
        }
        // and the copies with the same content characters, whose fingerprints a title (given to one copy only, or
        // another one) or a text spaced out character by character can move past every block: scored as one sharing
        // every token, since nothing is closer
        QueryBuilder same = QueryBuilders.constantScoreQuery(
            QueryBuilders.boolQuery()
                .filter(QueryBuilders.termQuery(path(target, FlagFields.EXACT), exact))
                .filter(QueryBuilders.termQuery(path(target, FlagFields.STATUS), Fingerprinted.OK))
        ).boost(count);
        return QueryBuilders.boolQuery().filter(version).should(blocks).should(same).minimumShouldMatch(1);
    }

    /** The check of {@code verify_params}: null when the plugin's check cannot decide (not {@code ok}, Hamming only, metadata scores). */
    static SketchCheck verifyCheck(String target, Fingerprinted doc, VerifyConfig config) {
        if (doc.isOk() == false || config.useSketch() == false || config.mu() < 1.0) {
            return null;
        }
        return new SketchCheck(path(target, FlagFields.MINHASH), path(target, FlagFields.HEX), doc.sketch(), doc.fingerprint(),
            config.maxDistance(), config.minJaccard(), config.nearJaccard(), Similarity.SKETCH_SIZE);
    }

    /** The whole search body ({@code candidate_search} with a prefilter, reading doc values). */
    static SearchSourceBuilder source(String target, String id, Map<String, Object> fields, Fingerprinted doc, FlagSettings settings) {
        QueryBuilder query = candidateQuery(target, fields, settings.minShared(), verifyCheck(target, doc, settings.verify()));
        query = QueryBuilders.boolQuery().must(query).mustNot(QueryBuilders.idsQuery().addIds(id));
        SearchSourceBuilder source = new SearchSourceBuilder().query(query).size(settings.maxCandidates()).fetchSource(false);
        for (String name : List.of(FlagFields.HEX, FlagFields.MINHASH, FlagFields.META_MINHASH, FlagFields.EXACT, FlagFields.STATUS,
            FlagFields.CLUSTER)) {
            source.docValueField(path(target, name));
        }
        source.docValueField(path(target, FlagFields.INDEXED_AT), FlagFields.INDEXED_AT_FORMAT);
        return source.trackTotalHits(false);
    }

    /**
     * Above any candidate's score (at most the 64 shared tokens, or the exact-hash clause's 64): the stored copy comes
     * first on every shard.
     */
    private static final float OWN_COPY_SCORE = 1_000f;

    /**
     * {@link #source} and, ranked before its candidates, the document's own stored copy of the same version: a document
     * sent again keeps that copy's {@code indexed_at} while it is still a near-duplicate of it, as Python's
     * {@code _kept_time} does with the copy it reads before writing; found by the same search, so at no extra request.
     * The size stays {@code max_candidates} (an index's {@code max_result_window} may be no larger): with a stored
     * copy, one candidate fewer, which matters only when more match than the cap.
     */
    static SearchSourceBuilder sourceWithOwnCopy(String target, String id, Map<String, Object> fields, Fingerprinted doc,
            FlagSettings settings) {
        SearchSourceBuilder source = source(target, id, fields, doc, settings);
        QueryBuilder own = QueryBuilders.constantScoreQuery(
            QueryBuilders.boolQuery()
                .filter(QueryBuilders.idsQuery().addIds(id))
                .filter(QueryBuilders.termQuery(path(target, FlagFields.VERSION), (String) fields.get(FlagFields.VERSION)))
        ).boost(OWN_COPY_SCORE);
        return source.query(QueryBuilders.boolQuery().should(source.query()).should(own));
    }

    static SearchRequest request(String index, String target, String id, Map<String, Object> fields, Fingerprinted doc,
            FlagSettings settings) {
        // all shards or an error: a shard without a copy at this moment would hide its candidates, and the document
        // would be written as an original of a cluster of its own (Elasticsearch's default allows partial results)
        return new SearchRequest(index).source(sourceWithOwnCopy(target, id, fields, doc, settings)).allowPartialSearchResults(false);
    }

    /** A hit as {@code Stored.from_doc_values} reads it: seed 0 only, of the searched {@code version}. */
    static Candidate candidate(SearchHit hit, String target, String version) {
        Fingerprinted doc = Fingerprinted.fromDocValues(
            first(hit, target, FlagFields.HEX),
            first(hit, target, FlagFields.MINHASH),
            first(hit, target, FlagFields.EXACT),
            first(hit, target, FlagFields.STATUS),
            first(hit, target, FlagFields.META_MINHASH)
        );
        String indexedAt = first(hit, target, FlagFields.INDEXED_AT);
        return new Candidate(hit.getId(), doc, version, first(hit, target, FlagFields.CLUSTER),
            indexedAt == null ? "" : IndexedAt.canonical(indexedAt));
    }

    private static String first(SearchHit hit, String target, String name) {
        DocumentField field = hit.field(path(target, name));
        Object value = field == null ? null : field.getValue();
        return value == null ? null : value.toString();
    }

    static String path(String target, String name) {
        return target + "." + name;
    }
}
