package io.neardup.flag;

import static io.neardup.flag.Docs.ok;
import static io.neardup.flag.Docs.range;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The assignment rule: preference order, the drift guard, no chaining. The scenario of the guard tests was run through
 * Python's {@code verify}, {@code close_to_canonical} and {@code choose} with the same values.
 */
class AssignerTest {
    private static final Assigner ASSIGNER = new Assigner(VerifyConfig.DEFAULT);

    /** The new document: sketch 0..99. */
    private static final Fingerprinted X = ok(0, range(0, 100));
    /** Canonical of cluster A: nothing in common with X. */
    private static final Candidate A = new Candidate("A", ok(0xFFFFFFFF00000000L, range(100, 200)), "v", "A", "t1");
    /** A member of cluster A, the best match of X (Jaccard 2/3). */
    private static final Candidate B = new Candidate("B", ok(0xFFFFL, range(20, 120)), "v", "A", "t2");
    /** A document never assigned (its own canonical), a weaker match (0.390625). */
    private static final Candidate C = new Candidate("C", ok(0xFFFF0000L, range(50, 150)), "v", null, "t3");

    private static Option option(String target, double similarity, int distance, String indexedAt) {
        return new Option(target, target, new Match(distance, similarity), new OrderKey(indexedAt, target));
    }

    @Test
    void preferenceIsSimilarityThenDistanceThenTheEarlierDocument() {
        Option best = option("a", 0.95, 10, "t9");
        Option near = option("b", 0.9, 2, "t8");
        Option far = option("c", 0.9, 5, "t1");
        Option earlier = option("d", 0.9, 2, "t7");
        Optional<Option> chosen = Assigner.choose(List.of(far, near, earlier, best), o -> true);
        assertEquals(Optional.of(best), chosen);
        assertEquals(Optional.of(earlier), Assigner.choose(List.of(far, near, earlier), o -> true));
        assertEquals(Optional.of(near), Assigner.choose(List.of(far, near), o -> true));
        // same time: the id decides, by code point as Python's str (U+FFFF before U+1F600; UTF-16 says otherwise)
        Option emoji = option("\uD83D\uDE00", 0.9, 2, "t7");
        Option bmp = option("\uFFFF", 0.9, 2, "t7");
        assertEquals(Optional.of(bmp), Assigner.choose(List.of(emoji, bmp), o -> true));
    }

    @Test
    void theDriftGuardSendsTheDocumentToTheNextJoinableMatch() {
        List<Candidate> candidates = List.of(B, C);
        List<Option> options = ASSIGNER.options("X", X, candidates);
        assertEquals(List.of(new Option("B", "A", new Match(16, 0.6666666666666666), B.order()),
            new Option("C", "C", new Match(16, 0.390625), C.order())), options);
        assertEquals(Set.of("A"), Assigner.canonicalsToFetch(options, candidates));
        // X is not close to A: B's cluster is closed to it, C (its own canonical) takes it
        Assignment a = ASSIGNER.choose("X", X, options, candidates, Map.of("A", A.doc())::get);
        assertEquals(new Assignment("C", "C", new Match(16, 0.390625)), a);
        assertEquals(0.3906, a.storedSimilarity());
    }

    @Test
    void noChainingTheDocumentJoinsTheCanonicalsCluster() {
        // a canonical that cannot be found cannot guard its cluster: X joins A through B, named A, not B
        Assignment a = ASSIGNER.assign("X", X, List.of(B, C), id -> null);
        assertEquals(new Assignment("A", "B", new Match(16, 0.6666666666666666)), a);
        // the canonical among the candidates guards without a fetch
        assertEquals("C", ASSIGNER.assign("X", X, List.of(A, B, C), id -> {
            throw new AssertionError("fetched " + id);
        }).cluster());
        // close to the canonical: joins through the member
        Candidate nearA = new Candidate("A", ok(0, range(0, 100)), "v", "A", "t1");
        assertEquals(new Assignment("A", "B", new Match(16, 0.6666666666666666)),
            ASSIGNER.assign("X", X, List.of(B, C), Map.of("A", nearA.doc())::get));
    }

    @Test
    void aDocumentWrittenAgainStaysTheCanonicalOfTheClusterItNames() {
        // B was assigned to cluster A when A was first written; A, written again, matches B: it stays A's canonical
        // (joining its own cluster as B's duplicate would name each of them the other's original)
        Candidate member = new Candidate("B", X, "v", "A", "t2");
        assertEquals(Assignment.canonical("A"), ASSIGNER.assign("A", X, List.of(member, C), id -> X));
        assertEquals(new Assignment("A", "B", new Match(0, 1.0)), ASSIGNER.assign("Y", X, List.of(member), id -> X));
    }

    @Test
    void aDocumentTakesOnlyAnEarlierTargetAsPythonsChooseWithBefore() {
        // X keeps the time t2 (written again): C, written at t3, is found but is later; B (t2, id "B" < "X") is earlier
        List<Candidate> candidates = List.of(B, C);
        List<Option> options = ASSIGNER.options("X", X, candidates);
        Map<String, Fingerprinted> canonicals = Map.of("A", X);
        assertEquals("A", ASSIGNER.choose("X", X, new OrderKey("t2", "X"), options, candidates, canonicals::get).cluster());
        assertEquals(Assignment.canonical("X"),
            ASSIGNER.choose("X", X, new OrderKey("t1", "X"), options, candidates, canonicals::get));
        // a later member of its own cluster still keeps a document written again the canonical
        Candidate member = new Candidate("B", X, "v", "A", "t9");
        List<Option> own = ASSIGNER.options("A", X, List.of(member));
        assertEquals(Assignment.canonical("A"), ASSIGNER.choose("A", X, new OrderKey("t1", "A"), own, List.of(member), id -> X));
    }

    @Test
    void withoutAJoinableMatchTheDocumentStartsItsOwnCluster() {
        Assignment a = ASSIGNER.assign("X", X, List.of(B), Map.of("A", A.doc())::get);
        assertEquals(Assignment.canonical("X"), a);
        assertEquals(null, a.storedSimilarity());
        assertEquals(Assignment.canonical("X"), ASSIGNER.assign("X", X, List.of(A), id -> null));
        assertEquals(Assignment.canonical("X"), ASSIGNER.assign("X", X, List.of(), id -> null));
    }

    @Test
    void candidatesAreDistinctAndNeverTheDocumentItself() {
        IllegalArgumentException self = assertThrows(IllegalArgumentException.class,
            () -> ASSIGNER.assign("B", X, List.of(B), id -> null));
        assertTrue(self.getMessage().contains("own candidates"), self.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ASSIGNER.assign("X", X, List.of(B, B), id -> null));
    }
}
