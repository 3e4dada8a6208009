package io.neardup.plugin;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * At most {@code limit} of the node's candidate searches in flight; the others wait here, in arrival order, instead
 * of in the search thread pool's queue.
 *
 * <p>Why: the processor fingerprints a bulk's documents one after another and starts each one's search without
 * waiting, so a bulk of 500 documents puts 500 searches on the node at once. Two such bulks at a moment when searches
 * are slow (cold caches, a large merge) fill the search pool's queue (1,000 by default), and the node rejects the
 * searches beyond it: their documents failed, and the client's bulk answered 500 for them. Waiting here costs no
 * thread: a search's completion starts the next one.
 *
 * <p>A task is given a {@code done} callback and must call it once its search has completed, whichever way; a second
 * call does nothing. A task handles its own failures: one that throws all the same is counted done, and what it threw
 * is not passed on (the gate runs tasks for many documents and cannot tell whose caller to give it to). Tasks that
 * complete at once (a search refused before it was sent) start the next from a loop, not from a deeper frame, so a
 * long queue of them cannot overflow the stack.
 */
final class SearchGate {
    /** The limit for an unbounded search queue (which rejects nothing): what a queue of the default 1,000 gets. */
    static final int UNBOUNDED_QUEUE_LIMIT = 250;

    private final int limit;
    private final Queue<Consumer<Runnable>> waiting = new ConcurrentLinkedQueue<>();
    private final AtomicInteger inFlight = new AtomicInteger();
    /** requests to start waiting tasks; only the caller that raised it from 0 starts them (the others' are counted) */
    private final AtomicInteger drains = new AtomicInteger();

    SearchGate(int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("the limit of searches in flight must be at least 1, not " + limit);
        }
        this.limit = limit;
    }

    /**
     * The gate for a node whose search pool queues {@code queueSize} tasks ({@code thread_pool.search.queue_size}, -1
     * for no bound): a quarter of it, leaving the rest to the node's other searches and to other nodes' flagging.
     */
    static SearchGate forSearchQueue(int queueSize) {
        return new SearchGate(queueSize < 0 ? UNBOUNDED_QUEUE_LIMIT : Math.max(1, queueSize / 4));
    }

    /** Runs {@code task} now if fewer than {@code limit} tasks are in flight, else once enough of them are done. */
    void run(Consumer<Runnable> task) {
        waiting.add(task);
        drain();
    }

    int limit() {
        return limit;
    }

    /** Tasks started and not yet done. */
    int inFlight() {
        return inFlight.get();
    }

    /** Tasks waiting for a place. */
    int waiting() {
        return waiting.size();
    }

    private void drain() {
        if (drains.getAndIncrement() != 0) {
            return; // another caller is starting tasks; it loops once more for this request
        }
        int missed = 1;
        do {
            // only this loop raises inFlight, so a place seen free stays free until it is taken here
            while (inFlight.get() < limit) {
                Consumer<Runnable> task = waiting.poll();
                if (task == null) {
                    break;
                }
                inFlight.incrementAndGet();
                start(task);
            }
            missed = drains.addAndGet(-missed);
        } while (missed != 0);
    }

    private void start(Consumer<Runnable> task) {
        AtomicBoolean finished = new AtomicBoolean();
        Runnable done = () -> {
            if (finished.compareAndSet(false, true)) {
                inFlight.decrementAndGet();
                drain();
            }
        };
        try {
            task.accept(done);
        } catch (RuntimeException e) {
            done.run();
        }
    }
}
