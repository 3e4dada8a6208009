package io.neardup.fingerprint;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

/**
 * The fingerprint configuration the Python core exported ({@code neardup/node/export/fingerprint_config.py}):
 * every setting that shapes a fingerprint, its {@code describe()} text and version. The Java pipeline
 * implements one algorithm; it refuses a configuration of another algorithm or with factors it lacks, so it
 * never stores a version whose fingerprints it would not reproduce.
 */
public record FingerprintConfig(
    int algorithm,
    String version,
    String describe,
    int seeds,
    int minChars,
    int minFeatures,
    boolean foldScript,
    int weightUnitBits,
    boolean tf,
    boolean idf,
    boolean pos,
    boolean title,
    double titleFactor,
    String sentenceEnd,
    Map<String, Double> posWeights,
    double[] lengthFactors) {

    /** The algorithm number this port implements ({@code ALGORITHM} in {@code ingest/fingerprint.py}). */
    public static final int ALGORITHM = 6;

    static final String RESOURCE = "/io/neardup/data/fingerprint/config.properties";

    /** The configuration packed into the plugin. */
    public static FingerprintConfig load() {
        Properties p = new Properties();
        try (InputStream in = FingerprintConfig.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + RESOURCE + ": the plugin was built without its data");
            }
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return parse(p);
    }

    static FingerprintConfig parse(Properties p) {
        int algorithm = Integer.parseInt(need(p, "algorithm"));
        if (algorithm != ALGORITHM) {
            throw new IllegalStateException("exported fingerprint algorithm " + algorithm + ", this port implements " + ALGORITHM);
        }
        if (!"normal".equals(need(p, "length")) || Boolean.parseBoolean(need(p, "signal"))) {
            throw new IllegalStateException("this port implements the 'normal' length factor without signal words, not "
                + "length=" + p.getProperty("length") + " signal=" + p.getProperty("signal"));
        }
        Map<String, Double> posWeights = new HashMap<>();
        Map<Integer, Double> lengths = new HashMap<>();
        for (String key : p.stringPropertyNames()) {
            if (key.startsWith("pos_weight.")) {
                posWeights.put(key.substring("pos_weight.".length()), Double.parseDouble(p.getProperty(key)));
            } else if (key.startsWith("length_factor.")) {
                lengths.put(Integer.parseInt(key.substring("length_factor.".length())), Double.parseDouble(p.getProperty(key)));
            }
        }
        double[] lengthFactors = new double[lengths.size()];
        for (int n = 0; n < lengthFactors.length; n++) {
            Double v = lengths.get(n);
            if (v == null) {
                throw new IllegalStateException("length factors are not tabulated for every length up to " + lengthFactors.length);
            }
            lengthFactors[n] = v;
        }
        if (lengthFactors[lengthFactors.length - 1] != 1.0) {
            throw new IllegalStateException("the last tabulated length factor must be exactly 1.0");
        }
        String describe = need(p, "describe");
        String version = need(p, "version");
        String computed = "nd" + algorithm + "-" + Hashes.xxh3Hex(describe).substring(0, 8);
        if (!computed.equals(version)) {
            throw new IllegalStateException("exported version " + version + " is not the hash of its description (" + computed + ")");
        }
        return new FingerprintConfig(
            algorithm,
            version,
            describe,
            Integer.parseInt(need(p, "seeds")),
            Integer.parseInt(need(p, "min_chars")),
            Integer.parseInt(need(p, "min_features")),
            Boolean.parseBoolean(need(p, "fold_script")),
            Integer.parseInt(need(p, "weight_unit_bits")),
            Boolean.parseBoolean(need(p, "tf")),
            Boolean.parseBoolean(need(p, "idf")),
            Boolean.parseBoolean(need(p, "pos")),
            Boolean.parseBoolean(need(p, "title")),
            Double.parseDouble(need(p, "title_factor")),
            need(p, "sentence_end"),
            Map.copyOf(posWeights),
            lengthFactors);
    }

    private static String need(Properties p, String key) {
        String value = p.getProperty(key);
        if (value == null) {
            throw new IllegalStateException("fingerprint config lacks " + key);
        }
        return value;
    }

    /** The word-length factor of a word of {@code codePoints} characters. */
    public double lengthFactor(int codePoints) {
        return codePoints < lengthFactors.length ? lengthFactors[codePoints] : 1.0;
    }

    /** The part-of-speech factor: the longest of the tag's first 3, 2, 1 characters with a weight, else 1.0. */
    public double posFactor(String tag) {
        for (int size = 3; size >= 1; size--) {
            Double v = posWeights.get(tag.length() > size ? tag.substring(0, size) : tag);
            if (v != null) {
                return v;
            }
        }
        return 1.0;
    }
}
