package io.neardup.plugin;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

import org.elasticsearch.ExceptionsHelper;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.get.MultiGetItemResponse;
import org.elasticsearch.action.get.MultiGetRequest;
import org.elasticsearch.action.get.MultiGetResponse;
import org.elasticsearch.action.search.SearchRequest;
import org.elasticsearch.action.search.SearchResponse;
import org.elasticsearch.action.support.ContextPreservingActionListener;
import org.elasticsearch.client.internal.Client;
import org.elasticsearch.common.util.concurrent.ThreadContext;
import org.elasticsearch.index.IndexNotFoundException;
import org.elasticsearch.index.query.QueryBuilders;
import org.elasticsearch.search.SearchHit;
import org.elasticsearch.search.builder.SearchSourceBuilder;
import org.elasticsearch.search.fetch.subphase.FetchSourceContext;

import io.neardup.flag.Assigner;
import io.neardup.flag.Assignment;
import io.neardup.flag.Candidate;
import io.neardup.flag.CandidateRule;
import io.neardup.flag.Fingerprinted;
import io.neardup.flag.Option;
import io.neardup.flag.OrderKey;
import io.neardup.flag.Verify;

/**
 * Cluster assignment of one fingerprinted document inside Elasticsearch, as the Python service's
 * {@code assign_batch} does it, without blocking a thread: register the document in the node's {@link FlagWindow};
 * search its candidates ({@link CandidateSearch}, asynchronously through the node client, with no more in flight than
 * the node's {@link SearchGate} allows, sent again while the node is busy or a shard has no copy: {@link Retrying});
 * take the earlier window documents the offline candidate rule admits ({@link CandidateRule}) and wait for their
 * assignments (future composition: a document of the same bulk may still be searching); replace search hits that
 * the window holds (its copy is newer); fetch the canonicals the drift guard needs that neither holds (an
 * asynchronous {@code mget}, realtime, so a canonical written moments ago is found, retried like the search); then
 * {@link Assigner#choose}.
 *
 * <p>Every path ends in exactly one call of the {@link Sink}, and every registered entry is completed (assigned, or
 * failed so that followers drop it), so no document waits forever on another.
 *
 * <p>Continuations started by another document's completion run on {@code executor} (the node's generic pool) in
 * this document's own thread context: a chain of reprints would otherwise nest one document's pipeline inside the
 * previous one's stack, and run it with that document's request headers.
 */
final class Flagger {
    /** Where the outcome goes: {@code write} puts the assignment into the document (may throw), {@code done} ends it. */
    interface Sink {
        void write(Assignment assignment, String indexedAt);

        void done(Exception failure);
    }

    private final Client client;
    private final FlagWindow window;
    private final IndexedAt clock;
    private final Executor executor;
    private final ThreadContext threadContext;
    private final SearchGate searches;
    private final Retrying retrying;
    private final Retrying.Delay delay;

    Flagger(Client client, FlagWindow window, IndexedAt clock, Executor executor, ThreadContext threadContext, SearchGate searches,
            Retrying retrying, Retrying.Delay delay) {
        this.client = client;
        this.window = window;
        this.clock = clock;
        this.executor = executor;
        this.threadContext = threadContext;
        this.searches = searches;
        this.retrying = retrying;
        this.delay = delay;
    }

    FlagWindow window() {
        return window;
    }

    /** One document's work, from registration to the sink. */
    private final class Job {
        final String index;
        final String windowKey;
        final String target;
        final String id;
        final String version;
        final Map<String, Object> fields;
        final Fingerprinted doc;
        final FlagSettings settings;
        final Sink sink;
        final Supplier<ThreadContext.StoredContext> context;
        /** The document came with its {@code indexed_at}, which stands. */
        final boolean timeGiven;
        FlagWindow.Entry entry;
        /** Its earlier copy in the window (sent again moments ago), of the same version, or null (also with a given time). */
        FlagWindow.Entry previous;

        Job(String index, String target, String id, Map<String, Object> fields, boolean timeGiven, FlagSettings settings, Sink sink) {
            this.index = index;
            this.timeGiven = timeGiven;
            this.windowKey = index + '\u0000' + target;
            this.target = target;
            this.id = id;
            this.fields = fields;
            this.version = String.valueOf(fields.get(FlagFields.VERSION));
            this.doc = Fingerprinted.fromSource(fields);
            this.settings = settings;
            this.sink = sink;
            this.context = threadContext == null ? null : threadContext.newRestorableContext(false);
        }

        /** Its place in document order, once registered in the window (which gives it its {@code indexed_at}). */
        OrderKey order() {
            return new OrderKey(entry.indexedAt(), id);
        }

        String describe() {
            return "document [" + id + "] of index [" + index + "]";
        }
    }

    /**
     * Flags a document of {@code index} whose fingerprint {@code fields} (as {@code record_fields}) are written under
     * {@code target}; {@code indexedAt} is the document's existing time, or null for a new one from the node's clock.
     */
    void flag(String index, String target, String id, Map<String, Object> fields, String indexedAt, FlagSettings settings, Sink sink) {
        Job job = null;
        try {
            job = new Job(index, target, id, fields, indexedAt != null, settings, sink);
            FlagWindow.Registration registration = window.register(job.windowKey, id, job.version, job.doc,
                indexedAt != null ? () -> indexedAt : clock::next, settings.windowNanos());
            job.entry = registration.entry();
            FlagWindow.Entry previous = registration.previous();
            // waited for only when its time may be kept: not for a document that came with its own
            boolean keeps = job.timeGiven == false && previous != null && previous.version.equals(job.version);
            job.previous = keeps ? previous : null;
            search(job, admitted(job, registration.earlier()));
        } catch (RuntimeException e) {
            if (job == null) {
                sink.done(e);
            } else {
                fail(job, e);
            }
        }
    }

    /**
     * The earlier window documents of the same version that the offline candidate rule pairs with this one: the
     * window offers those sharing a block under the same seed (too-short ones: the same exact hash), the only ones
     * the rule can pair, so it runs on them alone, with this document last ({@link CandidateRule#ofLast}: linear in
     * them, so a flood of copies in the window costs each new copy a pass over the flood, not the flood's pairs).
     */
    private List<FlagWindow.Entry> admitted(Job job, List<FlagWindow.Entry> earlier) {
        Map<String, FlagWindow.Entry> sharing = new LinkedHashMap<>();
        boolean ok = job.doc.isOk();
        boolean tooShort = Fingerprinted.TOO_SHORT.equals(job.doc.status());
        if (ok == false && tooShort == false) {
            return List.of();
        }
        for (FlagWindow.Entry e : earlier) {
            if (e.id.equals(job.id) || e.version.equals(job.version) == false) {
                continue;
            }
            boolean candidate = ok
                ? e.doc.isOk() && sharedBlocks(job.doc, e.doc) > 0
                : Fingerprinted.TOO_SHORT.equals(e.doc.status()) && e.doc.exact().equals(job.doc.exact());
            if (candidate) {
                sharing.remove(e.id); // a document registered again: its newest copy, in its newest place
                sharing.put(e.id, e);
            }
        }
        if (sharing.isEmpty()) {
            return List.of();
        }
        List<FlagWindow.Entry> members = new ArrayList<>(sharing.values());
        List<Fingerprinted> pool = new ArrayList<>(members.size() + 1);
        for (FlagWindow.Entry e : members) {
            pool.add(e.doc);
        }
        pool.add(job.doc);
        int[] picked = CandidateRule.withMinShared(job.settings.minShared()).ofLast(pool);
        List<FlagWindow.Entry> out = new ArrayList<>(picked.length);
        for (int position : picked) {
            out.add(members.get(position));
        }
        return out;
    }

    /** How many (seed, block) 16-bit blocks two documents share: zero lanes of the XOR, counted without a carry. */
    static int sharedBlocks(Fingerprinted a, Fingerprinted b) {
        int seeds = Math.min(a.seeds(), b.seeds());
        int count = 0;
        for (int s = 0; s < seeds; s++) {
            long x = a.fingerprint(s) ^ b.fingerprint(s);
            long y = (x & 0x7FFF7FFF7FFF7FFFL) + 0x7FFF7FFF7FFF7FFFL;
            count += Long.bitCount(~(y | x | 0x7FFF7FFF7FFF7FFFL));
        }
        return count;
    }

    private void search(Job job, List<FlagWindow.Entry> admitted) {
        // the earlier copy's time may be a stored one it keeps: known once it is assigned
        CompletableFuture<?>[] waits = new CompletableFuture<?>[admitted.size() + (job.previous == null ? 0 : 1)];
        for (int k = 0; k < admitted.size(); k++) {
            waits[k] = admitted.get(k).cluster();
        }
        if (job.previous != null) {
            waits[admitted.size()] = job.previous.cluster();
        }
        CompletableFuture<Void> earlierAssigned = CompletableFuture.allOf(waits);
        if (Fingerprinted.EMPTY.equals(job.doc.status())) { // never matches anything: no search (Python's match_none)
            afterSearch(job, admitted, List.of(), null, earlierAssigned);
            return;
        }
        ActionListener<SearchResponse> listener = ActionListener.wrap(response -> {
            List<Candidate> hits = new ArrayList<>();
            List<SearchHit> own = new ArrayList<>();
            for (SearchHit hit : response.getHits().getHits()) { // read now: the response is released after this call
                if (hit.getId().equals(job.id)) {
                    own.add(hit);
                } else {
                    hits.add(CandidateSearch.candidate(hit, job.target, job.version));
                }
            }
            afterSearch(job, admitted, hits, storedCopy(job, own), earlierAssigned);
        }, e -> {
            if (ExceptionsHelper.unwrapCause(e) instanceof IndexNotFoundException) {
                afterSearch(job, admitted, List.of(), null, earlierAssigned); // nothing indexed yet: the write creates the index
            } else {
                fail(job, new IllegalStateException("neardup flagging: the candidate search for " + job.describe()
                    + " failed: " + ExceptionsHelper.unwrapCause(e), e));
            }
        });
        // each attempt runs in the document's context, whichever thread starts it (the gate's or the scheduler's)
        searches.run(done -> retrying.run(
            attempt -> inContext(job, () -> client.search(
                CandidateSearch.request(job.index, job.target, job.id, job.fields, job.doc, job.settings), preserving(attempt))),
            delay,
            ActionListener.runBefore(listener, done::run)
        ));
    }

    /**
     * The document's stored copy among the search's hits of its own id: the one in the index written to, whose fields
     * read; none when it has none there, when an alias of several indices holds the id more than once (which copy is
     * this document's?), or when its fields do not read (as Python's {@code _kept_time} reads nothing then).
     */
    private static Candidate storedCopy(Job job, List<SearchHit> own) {
        if (own.size() != 1 || own.get(0).getIndex().equals(job.index) == false) {
            return null;
        }
        try {
            return CandidateSearch.candidate(own.get(0), job.target, job.version);
        } catch (RuntimeException e) {
            return null;
        }
    }

    private void afterSearch(Job job, List<FlagWindow.Entry> admitted, List<Candidate> hits, Candidate stored,
            CompletableFuture<Void> earlierAssigned) {
        if (earlierAssigned.isDone()) {
            assemble(job, admitted, hits, stored);
        } else {
            earlierAssigned.whenCompleteAsync((ignored, e) -> inContext(job, () -> assemble(job, admitted, hits, stored)), executor);
        }
    }

    private void assemble(Job job, List<FlagWindow.Entry> admitted, List<Candidate> hits, Candidate stored) {
        try {
            keepTime(job, stored);
            List<Candidate> candidates = new ArrayList<>();
            Set<String> taken = new HashSet<>();
            for (FlagWindow.Entry e : admitted) {
                String cluster = e.cluster().join();
                if (cluster != null) { // null: its ingest failed, it will not be written
                    candidates.add(new Candidate(e.id, e.doc, e.version, cluster, e.indexedAt()));
                    taken.add(e.id);
                }
            }
            if (hits.isEmpty() == false) {
                List<String> ids = new ArrayList<>();
                for (Candidate c : hits) {
                    ids.add(c.id());
                }
                Map<String, FlagWindow.Entry> inWindow = window.latest(job.windowKey, ids, job.entry.seq);
                for (Candidate c : hits) {
                    FlagWindow.Entry newer = inWindow.get(c.id());
                    // taken once: a search through an alias of several indices may find one id in two of them
                    if (taken.contains(c.id()) == false && (newer == null || newer.version.equals(job.version) == false)) {
                        candidates.add(c);
                        taken.add(c.id());
                    }
                }
            }
            Assigner assigner = new Assigner(job.settings.verify());
            List<Option> options = assigner.options(job.id, job.doc, candidates);
            Set<String> wanted = Assigner.canonicalsToFetch(options, candidates);
            Map<String, Fingerprinted> known = new HashMap<>();
            for (Map.Entry<String, FlagWindow.Entry> w : window.latest(job.windowKey, wanted, job.entry.seq).entrySet()) {
                if (w.getValue().version.equals(job.version)) {
                    known.put(w.getKey(), w.getValue().doc);
                }
            }
            List<String> fetch = new ArrayList<>();
            for (String id : wanted) {
                if (known.containsKey(id) == false) {
                    fetch.add(id);
                }
            }
            if (fetch.isEmpty()) {
                finish(job, assigner.choose(job.id, job.doc, job.order(), options, candidates, known::get));
                return;
            }
            fetchCanonicals(job, fetch, ActionListener.wrap(fetched -> {
                known.putAll(fetched);
                finish(job, assigner.choose(job.id, job.doc, job.order(), options, candidates, known::get));
            }, e -> fail(job, e)));
        } catch (RuntimeException e) {
            fail(job, e);
        }
    }

    /**
     * A document sent again keeps the {@code indexed_at} of its earlier copy while it is still a near-duplicate of it
     * (Python's {@code _kept_time}), so that {@code reconcile}, which orders by that time, never makes it the duplicate
     * of a copy written after it: the copy is its window entry when it was sent moments ago (and written), else
     * {@code stored}, found by the candidate search (of the same version), else none; a document that came with its
     * time keeps that one.
     */
    private static void keepTime(Job job, Candidate stored) {
        if (job.timeGiven) {
            return;
        }
        Fingerprinted before = null;
        String time = null;
        if (job.previous != null && job.previous.cluster().join() != null) {
            before = job.previous.doc;
            time = job.previous.indexedAt();
        } else if (stored != null) {
            before = stored.doc();
            time = stored.indexedAt();
        }
        if (time != null && time.isEmpty() == false && Verify.verify(job.doc, before, job.settings.verify()).isPresent()) {
            job.entry.keepTime(time);
        }
    }

    /** Room for each id read through an alias in this many of its indices (one id may be in several). */
    private static final int ALIAS_COPIES = 16;

    /**
     * The canonicals by id, read realtime from {@code _source}; one that no longer exists is absent. Through an alias of
     * several indices (a rollover alias) no realtime read can name the index, so a search for the ids reads them: what a
     * refresh has not made searchable yet is absent then.
     */
    private void fetchCanonicals(Job job, List<String> ids, ActionListener<Map<String, Fingerprinted>> listener) {
        MultiGetRequest request = new MultiGetRequest();
        String[] includes = FlagFields.CANONICAL_SOURCE.stream().map(f -> CandidateSearch.path(job.target, f)).toArray(String[]::new);
        for (String id : ids) {
            request.add(new MultiGetRequest.Item(job.index, id).fetchSourceContext(FetchSourceContext.of(true, includes, null)));
        }
        ActionListener<Map<String, Fingerprinted>> failing = listener.delegateResponse((l, e) -> l.onFailure(new IllegalStateException(
            "neardup flagging: fetching the canonicals " + ids + " for " + job.describe() + " failed: " + ExceptionsHelper.unwrapCause(e), e)));
        ActionListener<MultiGetResponse> read = ActionListener.wrap(response -> {
            Map<String, Fingerprinted> out = new HashMap<>();
            List<String> throughAlias = new ArrayList<>();
            for (MultiGetItemResponse item : response.getResponses()) {
                if (item.isFailed()) {
                    Throwable cause = ExceptionsHelper.unwrapCause(item.getFailure().getFailure());
                    if (cause instanceof IndexNotFoundException) {
                        continue;
                    }
                    if (cause instanceof IllegalArgumentException && String.valueOf(cause.getMessage()).contains("more than one index")) {
                        throughAlias.add(item.getId());
                        continue;
                    }
                    throw new IllegalStateException("neardup flagging: fetching canonical [" + item.getId() + "] for "
                        + job.describe() + " failed: " + cause, item.getFailure().getFailure());
                }
                if (item.getResponse().isExists()) {
                    put(out, item.getId(), item.getResponse().getSourceAsMap(), job.target);
                }
            }
            if (throughAlias.isEmpty()) {
                failing.onResponse(out);
                return;
            }
            SearchRequest search = new SearchRequest(job.index).source(new SearchSourceBuilder()
                .query(QueryBuilders.idsQuery().addIds(throughAlias.toArray(String[]::new)))
                .size(Math.min(10_000, throughAlias.size() * ALIAS_COPIES))
                .fetchSource(FetchSourceContext.of(true, includes, null)));
            retrying.run(attempt -> inContext(job, () -> client.search(search, preserving(attempt))), delay,
                failing.<SearchResponse>delegateFailureAndWrap((l, found) -> {
                    for (SearchHit hit : found.getHits().getHits()) {
                        put(out, hit.getId(), hit.getSourceAsMap(), job.target);
                    }
                    l.onResponse(out);
                }));
        }, failing::onFailure);
        retrying.run(attempt -> inContext(job, () -> client.multiGet(request, preserving(attempt))), delay, read);
    }

    /** A canonical's fingerprint fields from its {@code _source}, if it holds them. */
    private static void put(Map<String, Fingerprinted> out, String id, Map<String, Object> source, String target) {
        if (navigate(source, target) instanceof Map<?, ?> map) {
            @SuppressWarnings("unchecked")
            Map<String, ?> fields = (Map<String, ?>) map;
            out.put(id, Fingerprinted.fromSource(fields));
        }
    }

    private static Object navigate(Map<String, Object> source, String path) {
        Object at = source.get(path);
        if (at != null || path.indexOf('.') < 0) {
            return at;
        }
        Object node = source;
        for (String part : path.split("\\.")) {
            if (node instanceof Map<?, ?> map) {
                node = map.get(part);
            } else {
                return null;
            }
        }
        return node;
    }

    private void finish(Job job, Assignment assignment) {
        try {
            job.sink.write(assignment, job.entry.indexedAt());
        } catch (RuntimeException e) {
            fail(job, e);
            return;
        }
        window.assigned(job.entry, assignment.cluster());
        job.sink.done(null);
    }

    private void fail(Job job, Exception e) {
        if (job.entry != null) {
            window.failed(job.entry);
        }
        job.sink.done(e);
    }

    private void inContext(Job job, Runnable run) {
        if (job.context == null) {
            run.run();
            return;
        }
        try (ThreadContext.StoredContext ignored = job.context.get()) {
            run.run();
        }
    }

    private <T> ActionListener<T> preserving(ActionListener<T> listener) {
        return threadContext == null ? listener : ContextPreservingActionListener.wrapPreservingContext(listener, threadContext);
    }
}
