package io.neardup.text;

import java.util.ArrayList;
import java.util.List;

/**
 * jieba's precise mode ({@code jieba.Tokenizer().lcut(text)}, HMM on), word for word as
 * {@code ingest/precise.py} {@code PreciseCut.lcut}.
 *
 * <p>Text is split as jieba's {@code re_han_default}, {@code [\u4E00-\u9FD5a-zA-Z0-9+#&._%-]+}: those blocks
 * get the best route through the dictionary (right to left, the longer word winning a tie, with Python's own
 * log-probabilities, so ties fall the same way); runs of single characters go to the {@link Hmm} unless the
 * run is itself a word. Between blocks, jieba's {@code re_skip_default} {@code (\r\n|\s)} leaves every code
 * point a word of its own except {@code "\r\n"}: whether {@code \s} matches or not, each piece ends up as
 * single code points, so Python's notion of whitespace only matters for that pair (and {@code "\r"} is
 * whitespace in both). Blocks are all BMP characters, so UTF-16 indexes inside them are Python's indexes;
 * outside them the text is stepped by code point, so a character beyond the BMP stays one word.
 */
public final class PreciseCut {
    private static final class Holder {
        static final PreciseCut SHARED = load();
    }

    private static final char HAN_FIRST = '\u4E00';
    private static final char HAN_LAST = '\u9FD5';

    private final JiebaDictionary dictionary;
    private final Hmm hmm;
    /** Python's {@code log(1) - log(total)}: jieba's score for a character its dictionary lacks. */
    private final double unknown;

    private PreciseCut(JiebaDictionary dictionary, Hmm hmm, double unknown) {
        this.dictionary = dictionary;
        this.hmm = hmm;
        this.unknown = unknown;
    }

    /** The cut over the dictionary and HMM exported with the plugin, loaded on first use. */
    public static PreciseCut shared() {
        return Holder.SHARED;
    }

    /** The words of {@code text}, exactly as Python's {@code PreciseCut.lcut} (and so {@code jieba.lcut}). */
    public List<String> lcut(String text) {
        List<String> out = new ArrayList<>(text.length() / 2 + 4);
        int n = text.length();
        int at = 0;
        while (at < n) {
            int end = at;
            if (inBlock(text.charAt(at))) {
                while (end < n && inBlock(text.charAt(end))) {
                    end++;
                }
                cutBlock(text, at, end, out);
            } else {
                while (end < n && !inBlock(text.charAt(end))) {
                    end++;
                }
                between(text, at, end, out);
            }
            at = end;
        }
        return out;
    }

    /** A character of {@code re_han_default}'s class. */
    private static boolean inBlock(char c) {
        if (c >= HAN_FIRST) {
            return c <= HAN_LAST;
        }
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
            || c == '+' || c == '#' || c == '&' || c == '.' || c == '_' || c == '%' || c == '-';
    }

    /** Text between blocks: one word per code point, but {@code "\r\n"} is one word. */
    private static void between(String text, int from, int to, List<String> out) {
        int at = from;
        while (at < to) {
            int cp = text.codePointAt(at);
            int size = Character.charCount(cp);
            if (cp == '\r' && at + 1 < to && text.charAt(at + 1) == '\n') {
                size = 2;
            }
            out.add(text.substring(at, at + size));
            at += size;
        }
    }

    /**
     * For each position of {@code text[from, to)}, where the best route's next word ends (exclusive, relative
     * to {@code from}): jieba's {@code get_DAG} and {@code calc} in one right-to-left pass over the trie.
     */
    private int[] route(String text, int from, int to) {
        int n = to - from;
        double[] score = new double[n + 1];
        int[] next = new int[n];
        for (int start = n - 1; start >= 0; start--) {
            boolean found = false;
            double best = 0.0;
            next[start] = start + 1;
            int stop = start;
            int node = dictionary.child(0, text.charAt(from + start));
            while (node != JiebaDictionary.NONE) {
                if (dictionary.isWord(node)) {
                    double candidate = dictionary.logp(node) + score[stop + 1];
                    if (!found || candidate >= best) { // ties go to the longer word, as in jieba
                        found = true;
                        best = candidate;
                        next[start] = stop + 1;
                    }
                }
                stop++;
                if (stop == n) {
                    break;
                }
                node = dictionary.child(node, text.charAt(from + stop));
            }
            score[start] = found ? best : unknown + score[start + 1];
        }
        return next;
    }

    private void cutBlock(String text, int from, int to, List<String> out) {
        int[] next = route(text, from, to);
        int n = to - from;
        int at = 0;
        int singleFrom = -1;
        while (at < n) {
            int nxt = next[at];
            if (nxt - at == 1) {
                if (singleFrom < 0) {
                    singleFrom = at;
                }
            } else {
                if (singleFrom >= 0) {
                    singles(text, from + singleFrom, from + at, out);
                    singleFrom = -1;
                }
                out.add(text.substring(from + at, from + nxt));
            }
            at = nxt;
        }
        if (singleFrom >= 0) {
            singles(text, from + singleFrom, to, out);
        }
    }

    /** A run of one-character words: the HMM may join them unless the run is itself a dictionary word. */
    private void singles(String text, int from, int to, List<String> out) {
        if (to - from == 1) {
            out.add(text.substring(from, to));
        } else if (!dictionary.isWord(dictionary.find(text, from, to))) {
            hmm.cut(text, from, to, out);
        } else {
            for (int i = from; i < to; i++) {
                out.add(text.substring(i, i + 1));
            }
        }
    }

    private static PreciseCut load() {
        double[] unknown = {Double.NaN};
        JiebaData.rows("constants.tsv", 2, row -> {
            if (row[0].equals("unknown")) {
                unknown[0] = Double.parseDouble(row[1]);
            }
        });
        if (Double.isNaN(unknown[0])) {
            throw new IllegalStateException("jieba constants.tsv has no unknown");
        }
        return new PreciseCut(JiebaDictionary.shared(), Hmm.shared(), unknown[0]);
    }
}
