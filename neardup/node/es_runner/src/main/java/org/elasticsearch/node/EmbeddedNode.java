package org.elasticsearch.node;

import java.util.Collection;

import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.env.Environment;
import org.elasticsearch.plugins.ClasspathPluginsService;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.plugins.PluginsLoader;
import org.elasticsearch.plugins.PluginsService;

/** A real Elasticsearch node whose plugins come from the class path (package-private hooks live here). */
public final class EmbeddedNode extends Node {

    public EmbeddedNode(Environment environment, Collection<Class<? extends Plugin>> plugins) {
        super(NodeConstruction.prepareConstruction(environment, null, new NodeServiceProvider() {
            @Override
            PluginsService newPluginService(Environment env, PluginsLoader loader) {
                return new ClasspathPluginsService(env.settings(), env, plugins);
            }
        }, false));
    }

    @Override
    protected void configureNodeAndClusterIdStateListener(ClusterService clusterService) {
        // the node/cluster id listener only feeds log4j's node-id lookup, which the launcher does not use
    }
}
