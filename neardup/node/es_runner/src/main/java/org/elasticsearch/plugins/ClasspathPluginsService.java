package org.elasticsearch.plugins;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.elasticsearch.Build;
import org.elasticsearch.action.admin.cluster.node.info.PluginsAndModules;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.env.Environment;

/**
 * A plugins service that loads plugin classes found on the JVM class path instead of plugin bundles
 * from a distribution's modules/ directory. It lives in this package because the hooks it needs
 * ({@code loadPlugin}, {@code loadExtensions}, {@code LoadedPlugin}) are package-private.
 */
public final class ClasspathPluginsService extends PluginsService {
    private final List<LoadedPlugin> loaded;
    private final PluginsAndModules info;

    public ClasspathPluginsService(Settings settings, Environment environment, Collection<Class<? extends Plugin>> classes) {
        super(settings, environment.configDir(), new PluginsLoader(Set.of(), Set.of(), Map.of()));
        List<LoadedPlugin> plugins = new ArrayList<>();
        List<PluginRuntimeInfo> infos = new ArrayList<>();
        for (Class<? extends Plugin> pluginClass : classes) {
            Plugin plugin = loadPlugin(pluginClass, settings, environment.configDir());
            PluginDescriptor descriptor = new PluginDescriptor(pluginClass.getName(), "classpath plugin", "NA",
                Build.current().version(), Integer.toString(Runtime.version().feature()), pluginClass.getName(), null,
                List.of(), false, false, false, false);
            plugins.add(new LoadedPlugin(descriptor, plugin, pluginClass.getClassLoader()));
            infos.add(new PluginRuntimeInfo(descriptor));
        }
        loadExtensions(plugins);
        this.loaded = List.copyOf(plugins);
        this.info = new PluginsAndModules(infos, List.of());
    }

    @Override
    protected List<LoadedPlugin> plugins() {
        return loaded;
    }

    @Override
    public PluginsAndModules info() {
        return info;
    }
}
