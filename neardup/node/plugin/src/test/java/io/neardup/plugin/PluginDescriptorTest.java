package io.neardup.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;

import org.elasticsearch.Build;
import org.elasticsearch.plugins.IngestPlugin;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.plugins.PluginDescriptor;
import org.elasticsearch.plugins.PluginsUtils;
import org.elasticsearch.plugins.ScriptPlugin;
import org.junit.jupiter.api.Test;

/**
 * The descriptor the zip carries, read by Elasticsearch's own parser and compatibility check, the ones
 * {@code elasticsearch-plugin install} and every node start run. (Installing the whole zip is checked by
 * {@code tests/plugin/test_package.py}.)
 */
final class PluginDescriptorTest {
    private static PluginDescriptor descriptor() throws Exception {
        return PluginDescriptor.readFromProperties(Path.of(System.getProperty("neardup.plugin.metadata")));
    }

    @Test
    void elasticsearchAcceptsTheDescriptor() throws Exception {
        PluginDescriptor descriptor = descriptor();
        PluginsUtils.verifyCompatibility(descriptor);
        assertEquals("neardup", descriptor.getName());
        assertEquals(Build.current().version(), descriptor.getElasticsearchVersion());
        assertEquals("8.19.21", descriptor.getVersion());
        assertEquals("17", descriptor.getJavaVersion());
        assertFalse(descriptor.hasNativeController());
        assertFalse(descriptor.isStable());
        assertFalse(descriptor.getDescription().isBlank());
    }

    @Test
    void theClassnameIsThePlugin() throws Exception {
        Class<?> plugin = Class.forName(descriptor().getClassname());
        assertEquals(NeardupPlugin.class, plugin);
        assertTrue(Plugin.class.isAssignableFrom(plugin));
        assertTrue(IngestPlugin.class.isAssignableFrom(plugin));
        assertTrue(ScriptPlugin.class.isAssignableFrom(plugin));
    }
}
