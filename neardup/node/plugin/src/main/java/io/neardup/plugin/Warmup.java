package io.neardup.plugin;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Loads the fingerprinter's tables once per node, in the background, when a pipeline first uses the processor.
 *
 * <p>Why: the tables (jieba's dictionary, OpenCC, IDF) take seconds and tens of megabytes to load. Loading them at
 * node start would cost every node of a cluster that never uses neardup; loading them on the first document
 * would stall that bulk request. A pipeline naming the processor is created on each ingest node when it is put,
 * so that is when this starts the load on the node's generic thread pool; a document arriving before it is done
 * waits for the same one load (the JVM initialises the fingerprinter's holder class once).
 */
final class Warmup {
    private static final Logger LOGGER = LogManager.getLogger(Warmup.class);
    /** A short Chinese text: the load must reach the segmenter's and converter's tables, not stop at an empty text. */
    static final String PROBE = "国务院召开常务会议";

    private final Consumer<Runnable> executor;
    private final Fingerprints fingerprints;
    private final AtomicBoolean started = new AtomicBoolean();

    Warmup(Consumer<Runnable> executor, Fingerprints fingerprints) {
        this.executor = executor;
        this.fingerprints = fingerprints;
    }

    /** Starts the load unless it was started before; returns at once. */
    void start() {
        if (started.compareAndSet(false, true)) {
            executor.accept(this::load);
        }
    }

    private void load() {
        long begin = System.nanoTime();
        try {
            fingerprints.fields(PROBE, null);
            LOGGER.info("neardup: fingerprinter loaded in {} ms", (System.nanoTime() - begin) / 1_000_000);
        } catch (RuntimeException | LinkageError | StackOverflowError e) {
            // each document will fail with the same cause, naming itself; the node stays up
            LOGGER.warn("neardup: the fingerprinter could not be loaded; documents through the neardup processor will fail", e);
        }
    }
}
