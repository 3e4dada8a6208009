package io.neardup.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The node's bound on candidate searches in flight: never passed, first come first started, none left waiting. */
final class SearchGateTest {

    @Test
    void atMostTheLimitRunAndTheRestStartInArrivalOrderAsOthersFinish() {
        SearchGate gate = new SearchGate(2);
        List<Integer> started = new ArrayList<>();
        List<Runnable> dones = new ArrayList<>();
        for (int k = 0; k < 5; k++) {
            int id = k;
            gate.run(done -> {
                started.add(id);
                dones.add(done);
            });
        }
        assertEquals(List.of(0, 1), started);
        assertEquals(2, gate.inFlight());
        assertEquals(3, gate.waiting());
        dones.get(1).run();
        dones.get(1).run(); // a second call changes nothing
        assertEquals(List.of(0, 1, 2), started);
        dones.get(0).run();
        assertEquals(List.of(0, 1, 2, 3), started);
        dones.get(2).run();
        dones.get(3).run();
        dones.get(4).run();
        assertEquals(List.of(0, 1, 2, 3, 4), started);
        assertEquals(0, gate.inFlight());
        assertEquals(0, gate.waiting());
    }

    @Test
    void tasksThatFinishAtOnceDoNotNestAndOneThatThrowsFreesItsPlace() {
        SearchGate gate = new SearchGate(1);
        List<Runnable> held = new ArrayList<>();
        gate.run(held::add); // holds the only place while 200,000 more queue up behind it
        AtomicInteger ran = new AtomicInteger();
        AtomicInteger deepest = new AtomicInteger();
        for (int k = 0; k < 200_000; k++) {
            int id = k;
            gate.run(done -> {
                ran.incrementAndGet();
                deepest.accumulateAndGet(Thread.currentThread().getStackTrace().length, Math::max);
                if (id % 2 == 0) {
                    done.run();
                } else {
                    throw new IllegalStateException("a task that fails before its search is sent");
                }
            });
        }
        assertEquals(0, ran.get());
        held.get(0).run();
        assertEquals(200_000, ran.get());
        assertEquals(0, gate.inFlight());
        assertTrue(deepest.get() < 100, "tasks ran " + deepest.get() + " frames deep");
    }

    @Test
    void underConcurrencyTheLimitHoldsAndEveryTaskRuns() throws Exception {
        SearchGate gate = new SearchGate(3);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        AtomicInteger running = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        ConcurrentLinkedQueue<Integer> ran = new ConcurrentLinkedQueue<>();
        CountDownLatch all = new CountDownLatch(20_000);
        try {
            for (int k = 0; k < 20_000; k++) {
                int id = k;
                pool.execute(() -> gate.run(done -> {
                    most.accumulateAndGet(running.incrementAndGet(), Math::max);
                    pool.execute(() -> { // completes on another thread, as a search response does
                        ran.add(id);
                        running.decrementAndGet();
                        done.run();
                        all.countDown();
                    });
                }));
            }
            assertTrue(all.await(60, TimeUnit.SECONDS), all.getCount() + " tasks never ran");
        } finally {
            pool.shutdownNow();
        }
        assertTrue(most.get() <= 3, most.get() + " in flight at once");
        assertEquals(20_000, new HashSet<>(ran).size());
        assertEquals(0, gate.waiting());
    }

    @Test
    void theLimitFollowsTheSearchQueue() {
        assertEquals(250, SearchGate.forSearchQueue(1000).limit());
        assertEquals(1, SearchGate.forSearchQueue(2).limit());
        assertEquals(SearchGate.UNBOUNDED_QUEUE_LIMIT, SearchGate.forSearchQueue(-1).limit());
        assertThrows(IllegalArgumentException.class, () -> new SearchGate(0));
    }
}
