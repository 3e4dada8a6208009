package io.neardup.fingerprint;

import io.neardup.text.Lexicon;
import io.neardup.text.Normalize;
import io.neardup.text.PreciseCut;
import io.neardup.text.PyChars;
import io.neardup.text.T2S;
import io.neardup.text.Tags;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The Python fingerprint pipeline ({@code ingest/fingerprint.py}, default configuration) in Java: normalise →
 * fold to Simplified → jieba precise cut → drop stopwords and punctuation → weigh → SimHash over 16 seeds; the
 * content characters → shingle sketch and exact hash. {@link #fields} gives the {@code neardup.*} fingerprint
 * fields {@code mappings/schema.py} {@code record_fields} writes, with the same values.
 */
public final class Fingerprinter {
    private static final class Holder {
        static final Fingerprinter SHARED = new Fingerprinter();
    }

    private final FingerprintConfig config = FingerprintConfig.load();
    private final PreciseCut cut = PreciseCut.shared();
    private final Tags tags = Tags.shared();
    private final T2S t2s = config.foldScript() ? T2S.shared() : null;
    private final Set<String> dropped;
    private final Weights weights;

    private Fingerprinter() {
        Set<String> drop = new HashSet<>(WordList.load("stopwords.txt"));
        config.sentenceEnd().codePoints().forEach(cp -> drop.add(new String(Character.toChars(cp))));
        drop.add(" ");
        this.dropped = Set.copyOf(drop);
        Lexicon lexicon = Lexicon.shared();
        this.weights = new Weights(config, IdfTable.load(lexicon), tags, lexicon);
    }

    /** The one instance: its tables load from the plugin's resources on first use (a few seconds). */
    public static Fingerprinter shared() {
        return Holder.SHARED;
    }

    /** The fingerprint version ({@code Fingerprinter.version} in Python), stored with every document. */
    public String version() {
        return config.version();
    }

    /** {@code normalize(text, fold)} of {@code ingest/normalize.py}. */
    String normalize(String text) {
        String out = Normalize.normalize(text);
        return t2s == null ? out : t2s.convert(out);
    }

    /** The kept words of normalised text ({@code Segmenter.segment} without signal sentences). */
    List<String> segment(String normalized) {
        List<String> out = new ArrayList<>();
        for (String w : cut.lcut(normalized)) {
            if (!dropped.contains(w) && (PyChars.isAlnum(w.codePointAt(0)) || !Normalize.isPunctuation(w))) {
                out.add(w);
            }
        }
        return out;
    }

    /**
     * The fingerprint fields of one document: {@code fingerprint} (signed longs, seed 0 first), {@code hex},
     * {@code b0..b3}, {@code status}, {@code version}, {@code exact}, {@code minhash}, {@code meta_minhash}.
     */
    public Map<String, Object> fields(String text, String title) {
        String normalized = normalize(text);
        List<String> words = segment(normalized);
        Set<String> titleWords = title != null && !title.isEmpty() && config.title()
            ? new HashSet<>(segment(normalize(title)))
            : Set.of();
        String chars = Normalize.contentChars(normalized);
        Features w = weights.weigh(words, titleWords);
        boolean empty = chars.isEmpty(); // Python's "empty": an exact hash of nothing would match every such text
        boolean ok = !empty && chars.codePointCount(0, chars.length()) >= config.minChars() && w.size() >= config.minFeatures();
        long[] fps = ok ? SimHash.fingerprints(w, config.seeds(), config.weightUnitBits()) : new long[0];

        Map<String, Object> out = new LinkedHashMap<>();
        List<Long> signed = new ArrayList<>(fps.length);
        for (long fp : fps) {
            signed.add(fp);
        }
        out.put(FieldNames.FINGERPRINT, signed);
        out.put(FieldNames.HEX, ok ? Hashes.hex(fps[0]) : null);
        for (int block = 0; block < 4; block++) {
            List<String> tokens = new ArrayList<>(fps.length);
            for (int seed = 0; seed < fps.length; seed++) {
                int value = (int) (fps[seed] >>> (48 - 16 * block)) & 0xFFFF;
                String hex = Integer.toHexString(value);
                tokens.add(seed + ":" + "0".repeat(4 - hex.length()) + hex);
            }
            out.put(FieldNames.BLOCKS.get(block), tokens);
        }
        out.put(FieldNames.STATUS, ok ? "ok" : empty ? "empty" : "too_short");
        out.put(FieldNames.VERSION, config.version());
        out.put(FieldNames.EXACT, Hashes.xxh3Hex(ok || empty ? chars : shortExactInput(chars, title)));
        out.put(FieldNames.MINHASH, Sketch.encode(Sketch.of(chars)));
        out.put(FieldNames.META_MINHASH, null);
        return out;
    }

    /**
     * What a too-short text's exact hash is of ({@code short_exact} in Python): its content characters, and its title's
     * after a separator when it has one; a body too short to fingerprint says too little alone.
     */
    private String shortExactInput(String chars, String title) {
        String titleChars = title != null && title.isEmpty() == false ? Normalize.contentChars(normalize(title)) : "";
        return titleChars.isEmpty() ? chars : chars + "\u001f" + titleChars;
    }

    @Override
    public String toString() {
        return "Fingerprinter[" + config.version() + ", seeds=" + config.seeds() + ", length factors="
            + Arrays.toString(Arrays.copyOf(config.lengthFactors(), 4)) + "…]";
    }
}
