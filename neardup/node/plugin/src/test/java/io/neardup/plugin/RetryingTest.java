package io.neardup.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import org.elasticsearch.ElasticsearchStatusException;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.search.SearchPhaseExecutionException;
import org.elasticsearch.action.search.ShardSearchFailure;
import org.elasticsearch.common.util.concurrent.EsRejectedExecutionException;
import org.elasticsearch.index.IndexNotFoundException;
import org.elasticsearch.rest.RestStatus;
import org.elasticsearch.transport.RemoteTransportException;
import org.junit.jupiter.api.Test;

/** A request refused by a busy node or a missing shard copy is sent again after a doubling delay; nothing else is. */
final class RetryingTest {

    /** What the listener got: responses and failures, in order. */
    private static final class Outcome implements ActionListener<String> {
        final List<String> responses = new ArrayList<>();
        final List<Exception> failures = new ArrayList<>();

        @Override
        public void onResponse(String response) {
            responses.add(response);
        }

        @Override
        public void onFailure(Exception e) {
            failures.add(e);
        }
    }

    /** A request that fails with {@code failures} in turn, then answers "ok"; counts its tries. */
    private static final class Flaky implements Consumer<ActionListener<String>> {
        final List<Exception> failures;
        int tries;

        Flaky(Exception... failures) {
            this.failures = List.of(failures);
        }

        @Override
        public void accept(ActionListener<String> listener) {
            int at = tries++;
            if (at < failures.size()) {
                listener.onFailure(failures.get(at));
            } else {
                listener.onResponse("ok");
            }
        }
    }

    private final List<Long> delays = new ArrayList<>();
    /** Runs the retry at once, noting the delay it asked for. */
    private final Retrying.Delay now = (millis, run) -> {
        delays.add(millis);
        run.run();
    };

    private static SearchPhaseExecutionException allShardsFailed(Exception cause) {
        return new SearchPhaseExecutionException("query", "all shards failed", new ShardSearchFailure[] { new ShardSearchFailure(cause) });
    }

    @Test
    void aRejectedSearchIsSentAgainAfterDoublingDelaysAndItsAnswerPassedOn() {
        Flaky search = new Flaky(
            new EsRejectedExecutionException("search queue full"),
            allShardsFailed(new EsRejectedExecutionException("search queue full")),
            new RemoteTransportException("[node-1]", new EsRejectedExecutionException("search queue full"))
        );
        Outcome outcome = new Outcome();
        new Retrying(50, 7).run(search, now, outcome);
        assertEquals(4, search.tries);
        assertEquals(List.of(50L, 100L, 200L), delays);
        assertEquals(List.of("ok"), outcome.responses);
        assertEquals(List.of(), outcome.failures);
    }

    @Test
    void aShardWithoutACopyIsRetriedLikeABusyNode() {
        Flaky search = new Flaky(new ElasticsearchStatusException("no shard copy", RestStatus.SERVICE_UNAVAILABLE),
            new ElasticsearchStatusException("gateway", RestStatus.GATEWAY_TIMEOUT));
        Outcome outcome = new Outcome();
        new Retrying(10, 3).run(search, now, outcome);
        assertEquals(List.of(10L, 20L), delays);
        assertEquals(List.of("ok"), outcome.responses);
    }

    @Test
    void theLastFailureIsPassedOnOnceTheRetriesAreSpent() {
        EsRejectedExecutionException last = new EsRejectedExecutionException("still full");
        Flaky search = new Flaky(new EsRejectedExecutionException("full"), new EsRejectedExecutionException("full"), last);
        Outcome outcome = new Outcome();
        new Retrying(5, 2).run(search, now, outcome);
        assertEquals(3, search.tries);
        assertEquals(List.of(5L, 10L), delays);
        assertEquals(List.of(), outcome.responses);
        assertEquals(1, outcome.failures.size());
        assertSame(last, outcome.failures.get(0));
    }

    @Test
    void aFailureNoRetryCanMendIsPassedOnAtOnce() {
        for (Exception failure : List.of(
            new IndexNotFoundException("gone"),
            new IllegalArgumentException("a malformed query"),
            allShardsFailed(new IllegalArgumentException("a malformed query")),
            new IllegalStateException("a bug")
        )) {
            delays.clear();
            Flaky search = new Flaky(failure);
            Outcome outcome = new Outcome();
            new Retrying(50, 7).run(search, now, outcome);
            assertEquals(1, search.tries, failure.toString());
            assertEquals(List.of(), delays);
            assertEquals(List.of(failure), outcome.failures);
        }
    }

    @Test
    void aRequestThatThrowsBeforeItIsSentCountsAsItsFailure() {
        Outcome outcome = new Outcome();
        int[] tries = { 0 };
        new Retrying(50, 7).run(listener -> {
            if (tries[0]++ == 0) {
                throw new EsRejectedExecutionException("the executor is full");
            }
            listener.onResponse("ok");
        }, now, outcome);
        assertEquals(2, tries[0]);
        assertEquals(List.of("ok"), outcome.responses);
    }

    @Test
    void whatTheListenerThrowsIsItsOwnAndNothingIsSentAgain() {
        Flaky search = new Flaky();
        Outcome seen = new Outcome();
        ActionListener<String> throwing = new ActionListener<>() {
            @Override
            public void onResponse(String response) {
                seen.onResponse(response);
                throw new EsRejectedExecutionException("the handler's own executor is full");
            }

            @Override
            public void onFailure(Exception e) {
                seen.onFailure(e);
            }
        };
        assertThrows(EsRejectedExecutionException.class, () -> new Retrying(50, 7).run(search, now, throwing));
        assertEquals(1, search.tries);
        assertEquals(List.of("ok"), seen.responses);
        assertEquals(List.of(), seen.failures);
        assertTrue(delays.isEmpty());
    }

    @Test
    void aRetryTheSchedulerRefusesPassesTheFailureOn() {
        EsRejectedExecutionException busy = new EsRejectedExecutionException("full");
        Flaky search = new Flaky(busy);
        Outcome outcome = new Outcome();
        new Retrying(50, 7).run(search, (millis, run) -> {
            throw new EsRejectedExecutionException("the scheduler is shutting down", true);
        }, outcome);
        assertEquals(1, search.tries);
        assertEquals(List.of(busy), outcome.failures);
        assertEquals(1, busy.getSuppressed().length);
    }

    @Test
    void statusesRetriedAreThoseOfABusyOrRecoveringCluster() {
        assertTrue(Retrying.retryable(new EsRejectedExecutionException("full")));
        assertTrue(Retrying.retryable(new ElasticsearchStatusException("x", RestStatus.BAD_GATEWAY)));
        assertFalse(Retrying.retryable(new ElasticsearchStatusException("x", RestStatus.INTERNAL_SERVER_ERROR)));
        assertFalse(Retrying.retryable(new ElasticsearchStatusException("x", RestStatus.NOT_FOUND)));
        assertThrows(IllegalArgumentException.class, () -> new Retrying(0, 3));
        assertThrows(IllegalArgumentException.class, () -> new Retrying(50, -1));
    }
}
