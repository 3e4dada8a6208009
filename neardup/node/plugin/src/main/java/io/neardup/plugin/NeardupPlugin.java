package io.neardup.plugin;

import java.util.Collection;
import java.util.List;
import java.util.Map;

import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.ingest.Processor;
import org.elasticsearch.plugins.IngestPlugin;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.plugins.ScriptPlugin;
import org.elasticsearch.plugins.SearchPlugin;
import org.elasticsearch.script.ScriptContext;
import org.elasticsearch.script.ScriptEngine;

/**
 * The neardup Elasticsearch plugin: the {@code neardup} ingest processor ({@link NeardupProcessor}), the
 * {@code neardup} script language ({@link NeardupScriptEngine}) and the {@code neardup_blocks} query
 * ({@link BlockMatchQueryBuilder}). One plugin for all three, so a cluster with this bundle installed fingerprints
 * documents and runs lookups' block match and in-cluster checks exactly as the embedded node does; the embedded node
 * loads this same class from its class path.
 */
public final class NeardupPlugin extends Plugin implements IngestPlugin, ScriptPlugin, SearchPlugin {
    /** The node setting of the search pool's queue, which bounds the candidate searches flagging keeps in flight. */
    static final String SEARCH_QUEUE_SIZE = "thread_pool.search.queue_size";

    @Override
    public Map<String, Processor.Factory> getProcessors(Processor.Parameters parameters) {
        Fingerprints fingerprints = Fingerprints.SHARED;
        Warmup warmup = new Warmup(parameters.genericExecutor, fingerprints);
        IndexedAt clock = IndexedAt.system();
        // one gate per node, sized by the node's search queue (Elasticsearch's default 1,000 when not set)
        SearchGate searches = SearchGate.forSearchQueue(parameters.env.settings().getAsInt(SEARCH_QUEUE_SIZE, 1000));
        // one window per node: every flagging pipeline of the node sees the documents the others registered
        Flagger flagger = new Flagger(parameters.client, FlagWindow.system(), clock, parameters.genericExecutor::accept,
            parameters.threadContext, searches, Retrying.DEFAULT, (millis, run) -> parameters.scheduler.apply(millis, run));
        return Map.of(
            NeardupProcessor.TYPE,
            new NeardupProcessor.Factory(fingerprints, warmup, clock, NeardupProcessor.MAX_TEXT_CHARS, flagger)
        );
    }

    @Override
    public ScriptEngine getScriptEngine(Settings settings, Collection<ScriptContext<?>> contexts) {
        return new NeardupScriptEngine();
    }

    @Override
    public List<QuerySpec<?>> getQueries() {
        return List.of(new QuerySpec<>(BlockMatchQueryBuilder.NAME, BlockMatchQueryBuilder::new, BlockMatchQueryBuilder::fromXContent));
    }
}
