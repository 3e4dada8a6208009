package io.neardup.plugin;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import org.elasticsearch.ExceptionsHelper;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.rest.RestStatus;

/**
 * An asynchronous request sent again, after a doubling delay, while it fails the way a busy or recovering cluster
 * fails: 429 (a thread pool's queue was full) or 502-504 (a shard copy unavailable while a node leaves or a
 * replica is promoted), the statuses Elasticsearch's own clients retry.
 *
 * <p>Why: a candidate search that fails fails its document, and the client's bulk answers 500 for it. The
 * {@link SearchGate} keeps flagging's own searches within the search queue, but the node's other searches (a
 * dashboard, a batch job) can fill it all the same, and a search during a node's loss meets a shard with no copy
 * for a moment. Both pass within seconds. The retry holds the document's place in the gate while it waits, so a
 * busy node gets fewer flagging searches, not more.
 *
 * @param firstDelayMillis the wait before the first retry; each next one waits twice as long
 * @param retries how many times a request is sent again before its last failure is passed on
 */
record Retrying(long firstDelayMillis, int retries) {
    /** Waits 50, 100, ... 3,200 ms: 6.35 s in all, longer than a replica's promotion on a small cluster usually takes. */
    static final Retrying DEFAULT = new Retrying(50, 7);

    /** Runs {@code run} after {@code millis} milliseconds, on a thread that may block briefly. */
    interface Delay {
        void after(long millis, Runnable run);
    }

    Retrying {
        if (firstDelayMillis < 1 || retries < 0) {
            throw new IllegalArgumentException("firstDelayMillis must be positive and retries not negative, not "
                + firstDelayMillis + " and " + retries);
        }
    }

    /** Is {@code failure} one that the same request may not meet a moment later? */
    static boolean retryable(Exception failure) {
        RestStatus status = ExceptionsHelper.status(ExceptionsHelper.unwrapCause(failure));
        int code = status.getStatus();
        return status == RestStatus.TOO_MANY_REQUESTS || (code >= 502 && code <= 504);
    }

    /**
     * Calls {@code attempt} with a listener for one try; a retryable failure tries again after the next delay, any
     * other outcome (or the failure of the last try) goes to {@code listener}, once.
     *
     * <pre>{@code
     * new Retrying(50, 7).run(l -> client.search(request, l), delay, listener);
     * }</pre>
     */
    <T> void run(Consumer<ActionListener<T>> attempt, Delay delay, ActionListener<T> listener) {
        tryOnce(attempt, delay, listener, 0);
    }

    private <T> void tryOnce(Consumer<ActionListener<T>> attempt, Delay delay, ActionListener<T> listener, int retry) {
        // answered once: what the listener throws is its own, never a failure of the request to send again
        AtomicBoolean answered = new AtomicBoolean();
        ActionListener<T> once = new ActionListener<>() {
            @Override
            public void onResponse(T response) {
                if (answered.compareAndSet(false, true)) {
                    listener.onResponse(response);
                }
            }

            @Override
            public void onFailure(Exception e) {
                if (answered.compareAndSet(false, true) == false) {
                    return;
                }
                if (retry < retries && retryable(e)) {
                    AtomicBoolean started = new AtomicBoolean();
                    try {
                        delay.after(firstDelayMillis << retry, () -> {
                            started.set(true);
                            tryOnce(attempt, delay, listener, retry + 1);
                        });
                    } catch (RuntimeException refused) {
                        if (started.get()) {
                            throw refused; // thrown by the retry's own listener, which has been answered
                        }
                        e.addSuppressed(refused); // a scheduler shutting down: the retry never runs
                        listener.onFailure(e);
                    }
                } else {
                    listener.onFailure(e);
                }
            }
        };
        try {
            attempt.accept(once);
        } catch (RuntimeException e) {
            if (answered.get()) {
                throw e;
            }
            once.onFailure(e);
        }
    }
}
