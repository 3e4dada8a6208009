package io.neardup.es;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.apache.logging.log4j.core.Filter;
import org.apache.logging.log4j.core.appender.ConsoleAppender;
import org.apache.logging.log4j.core.config.Configurator;
import org.apache.logging.log4j.core.config.builder.api.ConfigurationBuilder;
import org.apache.logging.log4j.core.config.builder.api.ConfigurationBuilderFactory;
import org.apache.logging.log4j.core.config.builder.impl.BuiltConfiguration;
import org.elasticsearch.common.logging.LogConfigurator;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.env.Environment;
import org.elasticsearch.node.EmbeddedNode;
import org.elasticsearch.node.InternalSettingsPreparer;
import org.elasticsearch.node.Node;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.transport.netty4.Netty4Plugin;

/**
 * Starts N Elasticsearch nodes in this JVM, bound to loopback only, and keeps them up until the
 * process is told to stop (SIGTERM runs the shutdown hook, which closes every node).
 *
 * <p>One node can be stopped and started again while the others run, as a node of a real cluster is
 * lost and comes back: a file {@code stop-node-N} or {@code start-node-N} in {@code DIR/control} asks
 * for it; the launcher removes the file when done and records the node's state in
 * {@code DIR/control/node-N} ({@code started} or {@code stopped}).
 *
 * <p>Elasticsearch logs at INFO and above to standard output, in its usual pattern with the node's name in each
 * line; {@code neardup es start} sends standard output and error to {@code DIR/neardup-es.log}, one file per run.
 * A node that cannot start stops the launcher (exit status 1) at startup, and is closed again when started on
 * request, so that a later request starts it anew.
 *
 * <p>Each {@code --plugin CLASS} adds a plugin found on the class path by name: neardup's own plugin
 * ({@code io.neardup.plugin.NeardupPlugin}, the ingest processor and the {@code neardup} script language) is
 * built separately, as the zip users install, and this launcher does not compile against it.
 *
 * <pre>java -cp ... io.neardup.es.Launcher --port 9200 --data DIR [--nodes 1] [--cluster-name neardup] [--plugin CLASS]...</pre>
 */
public final class Launcher {
    /** What every embedded node runs: HTTP, and {@code GET /} (the distribution's rest-root module is not published). */
    private static final List<Class<? extends Plugin>> BUILT_IN = List.of(Netty4Plugin.class, RootEndpointPlugin.class);

    /**
     * Elasticsearch's pattern, with the node's name taken from the thread's: the nodes share this JVM, and so one
     * log configuration ({@code %node_name} holds a single name per JVM). Elasticsearch names its threads
     * {@code elasticsearch[NODE][POOL][T#N]}; the launcher names its own thread so while it builds or starts a node.
     */
    private static final String PATTERN =
        "[%d{ISO8601}][%-5p][%-25c{1.}] [%replace{%t}{^elasticsearch\\[([^\\]]+)\\].*$}{$1}] %m%n";

    private Launcher() {}

    public static void main(String[] args) throws Exception {
        // first, before a class loaded below starts Log4j: the nodes log while the shutdown hook closes them, and
        // Log4j's own hook must not stop logging before
        System.setProperty("log4j.shutdownHookEnabled", "false");
        int port = 9200;
        int nodes = 1;
        Integer transportPort = null;
        Path data = null;
        String clusterName = "neardup";
        List<Class<? extends Plugin>> plugins = new ArrayList<>(BUILT_IN);
        for (int i = 0; i < args.length; i += 2) {
            String value = i + 1 < args.length ? args[i + 1] : null;
            if (value == null) {
                usage("missing value after " + args[i]);
            }
            switch (args[i]) {
                case "--port" -> port = Integer.parseInt(value);
                case "--transport-port" -> transportPort = Integer.parseInt(value);
                case "--nodes" -> nodes = Integer.parseInt(value);
                case "--data" -> data = Path.of(value).toAbsolutePath();
                case "--cluster-name" -> clusterName = value;
                case "--plugin" -> plugins.add(pluginClass(value));
                default -> usage("unknown option " + args[i]);
            }
        }
        if (data == null) {
            usage("--data is required");
        }
        if (nodes < 1 || nodes > 9) {
            usage("--nodes must be between 1 and 9");
        }
        int firstTransport = transportPort != null ? transportPort : port + 100;

        configureLogging();

        List<String> names = new ArrayList<>();
        List<String> seeds = new ArrayList<>();
        for (int n = 0; n < nodes; n++) {
            names.add("node-" + n);
            seeds.add("127.0.0.1:" + (firstTransport + n));
        }
        List<Node> started = new ArrayList<>();
        List<Environment> environments = new ArrayList<>();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> closeAll(started), "neardup-es-shutdown"));
        Path control = Files.createDirectories(data.resolve("control"));
        for (int n = 0; n < nodes; n++) {
            Path config = Files.createDirectories(data.resolve("config"));
            Settings.Builder settings = Settings.builder()
                .put("path.home", data.toString())
                .put("path.data", data.resolve(names.get(n)).toString())
                .put("cluster.name", clusterName)
                .put("node.name", names.get(n))
                .put("network.host", "127.0.0.1")
                .put("http.port", Integer.toString(port + n))
                .put("transport.port", Integer.toString(firstTransport + n))
                // a development node: never refuse writes because the disk of a shared machine is full-ish
                .put("cluster.routing.allocation.disk.threshold_enabled", false)
                .put("action.auto_create_index", true);
            if (nodes == 1) {
                settings.put("discovery.type", "single-node");
            } else {
                settings.putList("discovery.seed_hosts", seeds).putList("cluster.initial_master_nodes", names)
                    // the nodes start one after another, and the first cannot form the cluster alone: not waiting
                    // for a cluster state in Node.start (30 s by default) lets the next ones start at once; the
                    // command waits for the cluster's health after
                    .put("discovery.initial_state_timeout", "0s");
            }
            String nodeName = names.get(n);
            Environment environment = InternalSettingsPreparer.prepareEnvironment(settings.build(), Map.of(), config, () -> nodeName);
            environments.add(environment);
            synchronized (started) {
                started.add(null);
            }
            try {
                startNode(n, started, environment, plugins);
            } catch (Throwable e) {
                // exit, so that `neardup es start` reports it at once; the shutdown hook closes the nodes already up
                log().error("neardup-es: " + nodeName + " failed to start", e);
                System.exit(1);
            }
            Files.writeString(control.resolve(nodeName), "started");
        }
        System.out.println("neardup-es: started " + nodes + " node(s) at http://127.0.0.1:" + port);
        System.out.flush();
        while (true) {
            Thread.sleep(200);
            for (int n = 0; n < nodes; n++) {
                obey(control, n, started, environments.get(n), plugins);
            }
        }
    }

    /** Carries out a request in {@code control} to stop or start node {@code n}. */
    private static void obey(Path control, int n, List<Node> nodes, Environment environment,
            List<Class<? extends Plugin>> plugins) {
        String name = "node-" + n;
        Path stop = control.resolve("stop-" + name);
        Path start = control.resolve("start-" + name);
        try {
            if (Files.exists(stop)) {
                Node node;
                synchronized (nodes) {
                    node = nodes.get(n);
                }
                if (node != null) {
                    String threadName = nameThreadFor(n);
                    try {
                        node.close();
                        node.awaitClose(60, java.util.concurrent.TimeUnit.SECONDS);
                    } finally {
                        Thread.currentThread().setName(threadName);
                        // emptied even when closing failed: a closed node in its slot would read as started, and
                        // a later start would do nothing
                        synchronized (nodes) {
                            nodes.set(n, null);
                        }
                    }
                }
                Files.writeString(control.resolve(name), "stopped");
                Files.deleteIfExists(stop);
            } else if (Files.exists(start)) {
                Node running;
                synchronized (nodes) {
                    running = nodes.get(n);
                }
                if (running == null) {  // a node in its slot is one that started: starting it again is nothing to do
                    startNode(n, nodes, environment, plugins);
                }
                Files.writeString(control.resolve(name), "started");
                Files.deleteIfExists(start);
            }
        } catch (Exception | Error e) { // an Error too (out of memory at start): the control loop must go on answering
            log().error("neardup-es: " + name + " failed to " + (Files.exists(stop) ? "stop" : "start"), e);
            try {
                Files.writeString(control.resolve(name), "failed: " + e);
                Files.deleteIfExists(stop);
                Files.deleteIfExists(start);
            } catch (java.io.IOException ignored) {
                // the state file is best effort; the log has the error
            }
        }
    }

    /**
     * Builds and starts node {@code n} into its slot of {@code nodes}. The slot holds the node while it starts, so
     * that the shutdown hook closes it too; a node that fails to start is closed (its ports, its data directory's
     * lock and its threads freed) and its slot emptied, so that a later request starts a new one.
     */
    private static void startNode(int n, List<Node> nodes, Environment environment,
            List<Class<? extends Plugin>> plugins) throws Exception {
        String threadName = nameThreadFor(n);
        try {
            Node node = new EmbeddedNode(environment, plugins);
            synchronized (nodes) {
                nodes.set(n, node);
            }
            try {
                node.start();
            } catch (Exception | Error e) {
                synchronized (nodes) {
                    nodes.set(n, null);
                }
                try {
                    node.close();
                    node.awaitClose(60, java.util.concurrent.TimeUnit.SECONDS);
                } catch (Exception closing) {
                    e.addSuppressed(closing);
                }
                throw e;
            }
        } finally {
            Thread.currentThread().setName(threadName);
        }
    }

    /**
     * Elasticsearch's log, INFO and above, to standard output ({@code neardup-es.log}); before this only errors
     * were logged, so a start that hung showed nothing of why.
     */
    private static void configureLogging() {
        LogConfigurator.configureESLogging();
        LogConfigurator.configureWithoutConfig(Settings.EMPTY);  // the status logger, errors only
        ConfigurationBuilder<BuiltConfiguration> builder = ConfigurationBuilderFactory.newConfigurationBuilder();
        builder.setStatusLevel(Level.ERROR);
        builder.setConfigurationName("neardup-es");
        builder.add(builder.newAppender("stdout", "Console")
            .addAttribute("target", ConsoleAppender.Target.SYSTEM_OUT)
            .add(builder.newLayout("PatternLayout").addAttribute("pattern", PATTERN)));
        builder.add(builder.newRootLogger(Level.INFO).add(builder.newAppenderRef("stdout")));
        // as Elasticsearch's own configuration: Lucene's notes on how it reads files are not news
        quiet(builder, "org.apache.lucene.store.MemorySegmentIndexInputProvider", "Using MemorySegmentIndexInput.*");
        quiet(builder, "org.apache.lucene.util.VectorUtilProvider", ".* incubator module is not readable.*");
        Configurator.reconfigure(builder.build());
    }

    /** The launcher's logger, asked for only once logging is configured (a static one would configure it first). */
    private static Logger log() {
        return LogManager.getLogger(Launcher.class);
    }

    private static void quiet(ConfigurationBuilder<BuiltConfiguration> builder, String logger, String regex) {
        builder.add(builder.newLogger(logger)
            .add(builder.newFilter("RegexFilter", Filter.Result.DENY, Filter.Result.NEUTRAL).addAttribute("regex", regex)));
    }

    private static void closeAll(List<Node> nodes) {
        synchronized (nodes) {
            for (int n = 0; n < nodes.size(); n++) {
                Node node = nodes.get(n);
                if (node == null) {
                    continue;
                }
                String threadName = nameThreadFor(n);
                try {
                    node.close();
                } catch (Exception e) {
                    System.err.println("neardup-es: error closing node-" + n + ": " + e);
                } finally {
                    Thread.currentThread().setName(threadName);
                }
            }
        }
    }

    /** Names this thread after node {@code n}, for the log's node column (PATTERN); returns the name it had. */
    private static String nameThreadFor(int n) {
        Thread thread = Thread.currentThread();
        String name = thread.getName();
        thread.setName("elasticsearch[node-" + n + "][neardup-launcher]");
        return name;
    }

    /** A plugin class on the class path, by name; a missing or wrong one stops the launcher before any node starts. */
    private static Class<? extends Plugin> pluginClass(String name) {
        try {
            return Class.forName(name).asSubclass(Plugin.class);
        } catch (ClassNotFoundException e) {
            usage("plugin class " + name + " is not on the class path");
        } catch (ClassCastException e) {
            usage(name + " is not an Elasticsearch plugin");
        }
        throw new AssertionError("unreachable");
    }

    private static void usage(String problem) {
        System.err.println("neardup-es: " + problem);
        System.err.println("usage: Launcher --port 9200 --data DIR [--nodes N] [--transport-port 9300] [--cluster-name NAME] [--plugin CLASS]...");
        System.exit(2);
    }
}
