package io.neardup.flag;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Cluster assignment of one new document from its candidates, by the one assignment rule of
 * {@code ingest/cluster.py} ({@code choose}) as flagging applies it ({@code assign_batch} of
 * {@code neardup/es/indexing.py}): verify every candidate; take the most preferred match ({@link Option#PREFERENCE})
 * whose cluster the document may join; join that cluster (named by its canonical), never the matched member itself,
 * so clusters do not chain. A match with the canonical itself is always joinable; a match with another member only
 * when the document is still close to the canonical (the drift guard, {@link Verify#closeToCanonical}); a canonical
 * that cannot be found (gone from the index) cannot guard its cluster, and the match alone decides.
 *
 * <p>The steps are open for an asynchronous caller: {@link #options} (verification, no I/O), then
 * {@link #canonicalsToFetch} (which canonicals the guard may need beyond the candidates themselves), then
 * {@link #choose(String, Fingerprinted, List, List, Function)} once they are fetched. {@link #assign} runs all three
 * with a synchronous lookup.
 *
 * <p>Candidates are ordered by {@code indexed_at}, then id, as Python's {@code assign_batch} orders a batch's own
 * documents and stored ones; a caller gives each document its {@code indexed_at} before flagging the next (later
 * times for later documents, but for a document sent again, which keeps its stored copy's time as Python's
 * {@code _times} does).
 */
public final class Assigner {
    private final VerifyConfig config;

    public Assigner(VerifyConfig config) {
        this.config = Objects.requireNonNull(config, "config");
    }

    public VerifyConfig config() {
        return config;
    }

    /**
     * The verified matches of {@code doc} among {@code candidates}, in candidate order, each with the cluster its
     * target stands for. {@code candidates} are distinct documents, none of them {@code id} itself (Python's search
     * excludes the documents being assigned).
     */
    public List<Option> options(String id, Fingerprinted doc, List<Candidate> candidates) {
        byId(id, candidates);
        List<Option> out = new ArrayList<>();
        for (Candidate c : candidates) {
            Optional<Match> match = Verify.verify(doc, c.doc(), config);
            if (match.isPresent()) {
                out.add(new Option(c.id(), c.clusterOrId(), match.get(), c.order()));
            }
        }
        return out;
    }

    /**
     * The clusters of {@code options} whose canonical is not among {@code candidates}: what the guard may have to
     * fetch ({@code wanted - known} of {@code assign_batch}), in option order.
     */
    public static Set<String> canonicalsToFetch(List<Option> options, List<Candidate> candidates) {
        Set<String> known = new HashSet<>();
        for (Candidate c : candidates) {
            known.add(c.id());
        }
        Set<String> out = new LinkedHashSet<>();
        for (Option o : options) {
            if (known.contains(o.cluster()) == false) {
                out.add(o.cluster());
            }
        }
        return out;
    }

    /**
     * The assignment of document {@code id} from its verified {@code options}. The guard's canonical is looked up
     * among {@code candidates} first (a candidate read from doc values suffices: the guard reads seed 0), then by
     * {@code fetched}, which returns null for a canonical that no longer exists.
     */
    public Assignment choose(
        String id,
        Fingerprinted doc,
        List<Option> options,
        List<Candidate> candidates,
        Function<String, Fingerprinted> fetched
    ) {
        return choose(id, doc, null, options, candidates, fetched);
    }

    /**
     * {@link #choose(String, Fingerprinted, List, List, Function)} for a document at {@code order} in document order,
     * which takes only an earlier target (see {@link #choose(List, Predicate, String, OrderKey)}); null takes any.
     */
    public Assignment choose(
        String id,
        Fingerprinted doc,
        OrderKey order,
        List<Option> options,
        List<Candidate> candidates,
        Function<String, Fingerprinted> fetched
    ) {
        Map<String, Candidate> known = byId(id, candidates);
        Optional<Option> chosen = choose(options, option -> {
            Candidate candidate = known.get(option.cluster());
            Fingerprinted canonical = candidate != null ? candidate.doc() : fetched.apply(option.cluster());
            return canonical == null || Verify.closeToCanonical(doc, canonical, config);
        }, id, order);
        return chosen.map(Assignment::joined).orElseGet(() -> Assignment.canonical(id));
    }

    /** {@link #options}, then {@link #choose(String, Fingerprinted, List, List, Function)} with {@code fetched}. */
    public Assignment assign(String id, Fingerprinted doc, List<Candidate> candidates, Function<String, Fingerprinted> fetched) {
        return choose(id, doc, options(id, doc, candidates), candidates, fetched);
    }

    /**
     * The assignment rule itself ({@code choose}): the most preferred option whose target is its cluster's canonical
     * or that {@code mayJoin} accepts, or empty (the document starts its own cluster). {@code mayJoin} is asked in
     * preference order and only until an option is taken. The sort is stable, as Python's {@code sorted}.
     */
    public static Optional<Option> choose(List<Option> options, Predicate<Option> mayJoin) {
        return choose(options, mayJoin, null);
    }

    /**
     * {@link #choose(List, Predicate)} for a document that may name a cluster already ({@code own}, its id: a document
     * written again; null for none). When it matches a member of the cluster it names, it stays that cluster's
     * canonical (empty), where joining the cluster as a duplicate of its own member would leave the cluster named by a
     * duplicate, and the two naming each other; so it does even when a match in another cluster is preferred (joining
     * that one would leave its members in a cluster named by a duplicate all the same): reconcile joins the two.
     */
    public static Optional<Option> choose(List<Option> options, Predicate<Option> mayJoin, String own) {
        return choose(options, mayJoin, own, null);
    }

    /**
     * {@link #choose(List, Predicate, String)} for a document at {@code before} in document order where options may
     * come after it (a search finds documents written after one that keeps its {@code indexed_at}, or after a
     * clock that runs behind): only an earlier target is taken, as the offline clustering offers only those, and a
     * later one still counts for {@code own}. Null takes any, as Python's {@code choose(..., before=None)}.
     */
    public static Optional<Option> choose(List<Option> options, Predicate<Option> mayJoin, String own, OrderKey before) {
        if (own != null && options.stream().anyMatch(option -> option.cluster().equals(own))) {
            return Optional.empty();
        }
        List<Option> ranked = new ArrayList<>();
        for (Option option : options) {
            if (before == null || option.order().compareTo(before) < 0) {
                ranked.add(option);
            }
        }
        ranked.sort(Option.PREFERENCE);
        for (Option option : ranked) {
            if (option.targetIsCanonical() || mayJoin.test(option)) {
                return Optional.of(option);
            }
        }
        return Optional.empty();
    }

    private static Map<String, Candidate> byId(String id, List<Candidate> candidates) {
        Objects.requireNonNull(id, "id");
        Map<String, Candidate> out = new HashMap<>();
        for (Candidate c : candidates) {
            if (c.id().equals(id)) {
                throw new IllegalArgumentException("document [" + id + "] is among its own candidates; exclude it from the search");
            }
            if (out.putIfAbsent(c.id(), c) != null) {
                throw new IllegalArgumentException("candidate [" + c.id() + "] is given twice; a window document replaces"
                    + " the search hit of the same id");
            }
        }
        return out;
    }
}
