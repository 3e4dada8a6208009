package io.neardup.plugin;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;

import org.elasticsearch.common.Strings;
import org.elasticsearch.common.logging.LogConfigurator;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.entitlement.runtime.policy.Policy;
import org.elasticsearch.entitlement.runtime.policy.PolicyUtils;
import org.elasticsearch.env.Environment;
import org.elasticsearch.index.VersionType;
import org.elasticsearch.ingest.IngestDocument;
import org.elasticsearch.ingest.Processor;
import org.elasticsearch.jdk.JarHell;
import org.elasticsearch.plugins.IngestPlugin;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.plugins.PluginDescriptor;
import org.elasticsearch.plugins.PluginsLoader;
import org.elasticsearch.plugins.PluginsService;
import org.elasticsearch.plugins.PluginsUtils;
import org.elasticsearch.plugins.ScriptPlugin;
import org.elasticsearch.xcontent.XContentBuilder;
import org.elasticsearch.xcontent.XContentFactory;

/**
 * Installs the plugin zip as {@code bin/elasticsearch-plugin install} does and loads it as a node starts it, with
 * Elasticsearch's own code, then runs one document through the processor it provides; prints what it found as one
 * JSON line. Run by {@code tests/plugin/test_package.py} in a JVM whose class path holds Elasticsearch and this
 * class only, as a node's does, so the plugin's classes and libraries can come from the zip alone.
 *
 * <pre>java -cp ES_JARS:TEST_CLASSES io.neardup.plugin.InstallCheck ZIP HOME TEXT</pre>
 *
 * <p>The steps are {@code InstallPluginAction}'s (its class ships only with the distribution): unpack with its
 * rules, read the descriptor, refuse a native controller, check compatibility and jar hell against the class path,
 * read the entitlement policy; then {@code PluginsLoader} and {@code PluginsService}, which a node uses.
 */
public final class InstallCheck {
    private InstallCheck() {}

    public static void main(String[] args) throws Exception {
        Path zip = Path.of(args[0]);
        Path home = Path.of(args[1]);
        String text = args[2];
        LogConfigurator.configureESLogging(); // Elasticsearch's classes log through it, as on a node
        Path plugins = Files.createDirectories(home.resolve("plugins"));
        Path modules = Files.createDirectories(home.resolve("modules"));
        Path config = Files.createDirectories(home.resolve("config"));

        Path staging = Files.createTempDirectory(plugins, ".installing-");
        unzip(zip, staging);
        PluginDescriptor info = PluginDescriptor.readFromProperties(staging);
        if (info.hasNativeController()) {
            throw new IllegalStateException("plugins can not have native controllers");
        }
        PluginsUtils.verifyCompatibility(info);
        PluginsUtils.preInstallJarHellCheck(info, staging, plugins, modules, JarHell.parseClassPath());
        boolean legacyPolicy = Files.exists(staging.resolve("plugin-security.policy"));
        Policy policy = PolicyUtils.parsePolicyIfExists(info.getName(), staging, true);
        Set<String> entitlements = PolicyUtils.getEntitlementsDescriptions(policy);
        Files.move(staging, plugins.resolve(info.getName()), StandardCopyOption.ATOMIC_MOVE);

        PluginsLoader loader = PluginsLoader.createPluginsLoader(Set.of(), PluginsLoader.loadPluginsBundles(plugins), Map.of());
        PluginsService service = new PluginsService(Settings.EMPTY, config, loader);
        Map<String, Plugin> loaded = service.pluginMap();
        Plugin plugin = loaded.get(info.getName());
        // a node's environment: the plugin reads node settings from it (the search queue that bounds flagging's searches)
        Environment environment = new Environment(Settings.builder().put("path.home", home.toString()).build(), config);
        Processor.Parameters parameters = new Processor.Parameters(environment, null, null, null, null, null, null, null, Runnable::run,
            null);
        Map<String, Processor.Factory> processors = new TreeMap<>(((IngestPlugin) plugin).getProcessors(parameters));
        String scriptLang = ((ScriptPlugin) plugin).getScriptEngine(Settings.EMPTY, List.of()).getType();

        Processor processor = processors.get("neardup").create(Map.of(), null, null, new HashMap<>(Map.of("field", "text")));
        IngestDocument document = new IngestDocument("index", "1", 1, null, VersionType.INTERNAL, new HashMap<>(Map.of("text", text)));
        String error = null;
        try {
            processor.execute(document);
        } catch (Exception e) {
            error = e.getMessage();
        }

        XContentBuilder out = XContentFactory.jsonBuilder().startObject()
            .field("name", info.getName())
            .field("classname", info.getClassname())
            .field("loaded", loaded.keySet())
            .field("class_loader", plugin.getClass().getClassLoader().getClass().getName())
            .field("same_loader_as_check", plugin.getClass().getClassLoader() == InstallCheck.class.getClassLoader())
            .field("processors", processors.keySet())
            .field("script_lang", scriptLang)
            .field("legacy_policy", legacyPolicy)
            .field("entitlements", entitlements)
            .field("source", document.getSource())
            .field("error", error)
            .endObject();
        System.out.println(Strings.toString(out));
    }

    /** {@code InstallPluginAction.unzip}'s rules: no intermediate "elasticsearch/" folder, no entry outside the plugin. */
    private static void unzip(Path zip, Path target) throws IOException {
        try (InputStream in = Files.newInputStream(zip); ZipInputStream entries = new ZipInputStream(in)) {
            ZipEntry entry;
            while ((entry = entries.getNextEntry()) != null) {
                if (entry.getName().startsWith("elasticsearch/")) {
                    throw new IllegalStateException("the zip has the old intermediate \"elasticsearch\" folder");
                }
                Path file = target.resolve(entry.getName());
                if (file.normalize().startsWith(target) == false) {
                    throw new IllegalStateException("zip entry " + entry.getName() + " resolves outside the plugin directory");
                }
                Files.createDirectories(file.getParent());
                if (entry.isDirectory() == false) {
                    try (OutputStream out = Files.newOutputStream(file)) {
                        entries.transferTo(out);
                    }
                }
            }
        }
    }
}
